/**
 * Case 8, load problems: LoadState not-found / masked / bad-setting / error, and a unit still
 * running after its unit file went away. Asked first: a unit that cannot load cannot start,
 * whatever its state says.
 */
import type { JournalEntry, UnitDetail } from "../../contract/types";
import type { Diagnosis, Evidence } from "../../contract/diagnosis";
import { formatState, truncate } from "../../contract/format";
import type { DiagnosisCase } from "../case";
import type { DiagnosisContext } from "../context";
import { capitalize, LOG_LINES, logEvidence, stateEvidence } from "../evidence";
import { managerComplaints } from "../history";

export const loadStateCase: DiagnosisCase = {
  id: "load-state",
  codes: ["unit-file-gone", "not-found", "masked", "bad-setting", "load-error"],
  diagnose: diagnoseLoadState,
};

/** systemd does not know the unit at all (no detail to build a context from). */
export function unitNotKnown(name: string, journal: readonly JournalEntry[]): Diagnosis {
  return notFound(name, null, journal);
}

function notFound(name: string, unit: UnitDetail | null, journal: readonly JournalEntry[]): Diagnosis {
  return {
    severity: "critical",
    code: "not-found",
    headline: `systemd has no unit named ${name}: check the name, or run \`systemctl daemon-reload\` after installing its unit file.`,
    evidence: [
      { label: "LoadState", value: "not-found", source: "systemd" },
      ...(unit?.fragmentPath ? [{ label: "Unit file", value: unit.fragmentPath, source: "systemd" as const }] : []),
      ...logEvidence(managerComplaints(journal, LOG_LINES)),
    ],
  };
}

function diagnoseLoadState(ctx: DiagnosisContext): Diagnosis | null {
  const u = ctx.unit;
  if (u.loadState === "loaded" || u.loadState === "") return null;
  const running = !["inactive", "failed"].includes(u.activeState);
  if (running) {
    // Still running from before the file went away or was masked: it works until it stops.
    if (u.loadState !== "not-found" && u.loadState !== "masked") return null;
    return {
      severity: "warning",
      code: "unit-file-gone",
      headline: `${capitalize(formatState(u))}, but its unit file is ${u.loadState === "masked" ? "masked" : "gone (not-found)"}: once it stops it cannot be started again.`,
      evidence: [stateEvidence(ctx), { label: "LoadState", value: u.loadState, source: "systemd" }],
    };
  }
  const fileEvidence: Evidence[] = u.fragmentPath ? [{ label: "Unit file", value: u.fragmentPath, source: "systemd" }] : [];
  switch (u.loadState) {
    case "not-found":
      return notFound(ctx.name, u, ctx.facts.journal);
    case "masked":
      return {
        severity: "critical",
        code: "masked",
        headline: `${ctx.name} is masked (its unit file points to /dev/null), so systemd refuses to start it; unmask it with \`systemctl unmask ${ctx.name}\` if it should run.`,
        evidence: [
          { label: "LoadState", value: "masked", source: "systemd" },
          { label: "UnitFileState", value: u.unitFileState || "masked", source: "systemd" },
          ...fileEvidence,
        ],
      };
    case "bad-setting": {
      const complaints = managerComplaints(ctx.facts.journal, LOG_LINES);
      const reason = complaints.length > 0 ? `: ${truncate(complaints[complaints.length - 1].message, 160)}` : "";
      return {
        severity: "critical",
        code: "bad-setting",
        headline: `The unit file has an invalid setting, so systemd refuses to start it${reason}.`,
        evidence: [{ label: "LoadState", value: "bad-setting", source: "systemd" }, ...fileEvidence, ...logEvidence(complaints)],
        nextStep: { text: `Fix the unit file${u.fragmentPath ? ` (${u.fragmentPath})` : ""}, run \`systemctl daemon-reload\`, then start it.` },
      };
    }
    default:
      return {
        severity: "critical",
        code: "load-error",
        headline: `systemd could not load the unit file (LoadState=${u.loadState}), so it cannot be started.`,
        evidence: [
          { label: "LoadState", value: u.loadState, source: "systemd" },
          ...fileEvidence,
          ...logEvidence(managerComplaints(ctx.facts.journal, LOG_LINES)),
        ],
        nextStep: { text: "Check the unit file and the log lines, run `systemctl daemon-reload`, then start it." },
      };
  }
}
