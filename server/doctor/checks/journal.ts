/**
 * journalctl: can this user run it and read the units' logs? An unprivileged user sees only its
 * own messages unless it is in the systemd-journal (or adm) group; the shipped agent unit adds
 * SupplementaryGroups=systemd-journal.
 */
import type { CheckResult, Identity, Runner } from "../types";

const JOURNAL_GROUPS = ["systemd-journal", "adm", "wheel"];

export async function checkJournal(runner: Runner, journalctl: string, identity: Identity, unit: string | undefined): Promise<CheckResult> {
  const args = ["--no-pager", "--quiet", "--lines=1", "--output=cat", unit ? `--unit=${unit}` : "--unit=gpudeck-agent.service"];
  const r = await runner.run(journalctl, args, { timeoutMs: 15_000 });
  if (r.spawnError) {
    return {
      id: "journal",
      status: "error",
      detail: `${journalctl} cannot be run: ${r.spawnError}`,
      fix: "install systemd's journalctl, or set agent.journalctl (GPUDECK_JOURNALCTL)",
    };
  }
  if (r.timedOut)
    return {
      id: "journal",
      status: "error",
      detail: `${journalctl} did not answer within 15 s`,
      fix: "check systemd-journald: systemctl status systemd-journald",
    };
  if (r.code !== 0) {
    const why = (r.stderr.trim() || r.stdout.trim()).split("\n")[0] ?? "";
    return { id: "journal", status: "error", detail: `${journalctl} exited ${r.code}: ${why}`, fix: "run the same command by hand: journalctl -u <unit> -n 1" };
  }
  if (identity.uid !== 0 && !identity.groups.some((g) => JOURNAL_GROUPS.includes(g))) {
    return {
      id: "journal",
      status: "error",
      detail: `uid ${identity.uid} is in none of ${JOURNAL_GROUPS.join(", ")}: journalctl shows it only its own messages, not the units' logs`,
      fix: "add SupplementaryGroups=systemd-journal to the agent's unit (the shipped one has it), or usermod -aG systemd-journal <user>",
    };
  }
  return { id: "journal", status: "ok", detail: `journalctl reads ${unit ? `${unit}'s` : "the"} log` };
}
