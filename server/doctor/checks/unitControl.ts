/**
 * May the agent manage its units? As root, yes. As another user (gpudeck, with
 * deploy/polkit/50-gpudeck.rules), systemd asks polkit on every action for
 * org.freedesktop.systemd1.manage-units with the unit and the verb as details. pkcheck asks
 * polkit the same question without starting anything, but polkit takes details only from root:
 * so, run as root, this asks about a process of the agent's user (the User= of
 * gpudeck-agent.service), started for the question and ended after it.
 */
import type { CheckResult, Identity, Runner, SystemdProbe, WithProcessOf } from "../types";

export const AGENT_UNIT = "gpudeck-agent.service";
const VERBS = ["start", "stop", "restart"];
const RULE_FIX =
  "copy deploy/polkit/50-gpudeck.rules to /etc/polkit-1/rules.d/ with the same globs as agent.units and the agent's user; or run the agent as root (deploy/gpudeck-agent-root.conf)";

export interface UnitControlDeps {
  runner: Runner;
  identity: Identity;
  probe: SystemdProbe;
  withProcessOf: WithProcessOf;
}

/** `units`: one unit of each glob, so a glob the polkit rule does not cover is found. */
export async function checkUnitControl(deps: UnitControlDeps, units: readonly string[]): Promise<CheckResult> {
  const id = "unit control";
  if (units.length === 0) return { id, status: "skip", detail: "no unit to ask about" };
  let user: string | null;
  try {
    user = await deps.probe.serviceUser(AGENT_UNIT);
  } catch (err) {
    return { id, status: "warn", detail: `cannot read ${AGENT_UNIT}'s User=: ${(err as Error).message}` };
  }
  if (user === null) {
    if (deps.identity.uid === 0) return { id, status: "ok", detail: `${AGENT_UNIT} is not installed; run as root, the agent may manage every unit` };
    return { id, status: "skip", detail: `${AGENT_UNIT} is not installed, so its user is not known` };
  }
  if (user === "" || user === "root")
    return { id, status: "ok", detail: `${AGENT_UNIT} runs as root: systemd lets it manage every unit (agent.units still limits it)` };
  if (deps.identity.uid !== 0) {
    return {
      id,
      status: "skip",
      detail: `polkit answers questions about a unit only to root: run \`sudo gpudeck doctor --agent\` to check that ${user} may manage the units`,
    };
  }
  if (!/^[a-z_][a-z0-9_-]*\$?$/i.test(user)) return { id, status: "warn", detail: `${AGENT_UNIT} runs as ${JSON.stringify(user)}, which is not a user name` };

  let outcome: CheckResult | string[];
  try {
    outcome = await deps.withProcessOf(user, async (pid) => {
      const refused: string[] = [];
      for (const unit of units) {
        const denied: string[] = [];
        for (const verb of VERBS) {
          const args = ["--action-id", "org.freedesktop.systemd1.manage-units", "--process", String(pid), "--detail", "unit", unit, "--detail", "verb", verb];
          const r = await deps.runner.run("pkcheck", args, { timeoutMs: 10_000 });
          if (r.spawnError)
            return {
              id,
              status: "warn",
              detail: `cannot ask polkit (pkcheck: ${r.spawnError})`,
              fix: "install polkit (apt install polkitd / dnf install polkit)",
            };
          // 0 yes; 1 not authorized; 2 only after authentication (which a service cannot give)
          if (r.code === 1 || r.code === 2) denied.push(verb);
          else if (r.code !== 0) return { id, status: "warn", detail: `pkcheck exited ${r.code}: ${(r.stderr || r.stdout).trim().split("\n")[0]}` };
        }
        if (denied.length > 0) refused.push(`${denied.join("/")} ${unit}`);
      }
      return refused;
    });
  } catch (err) {
    return { id, status: "warn", detail: `cannot start a process as ${user} to ask polkit: ${(err as Error).message}` };
  }
  if (!Array.isArray(outcome)) return outcome;
  if (outcome.length > 0) {
    return {
      id,
      status: "error",
      detail: `polkit does not let ${user} ${outcome.join(", ")}: systemd answers "Interactive authentication required"`,
      fix: RULE_FIX,
    };
  }
  return { id, status: "ok", detail: `polkit lets ${user} (${AGENT_UNIT}) start, stop and restart ${units.join(", ")}` };
}
