/**
 * "Why won't it start?" on the agent: gather what the hub and systemd know right now into the
 * engine's facts (fresh unit detail, the last 50 transitions, 60 s of full GPU samples, 50
 * journal lines, recent jobs) and ask the engine (server/diagnosis, pure).
 */
import type { Diagnosis } from "../contract/diagnosis";
import type { UnitDetail } from "../contract/types";
import { readDependencyStates } from "../diagnosis/dependencies";
import { diagnose } from "../diagnosis/diagnose";
import type { DiagnosisFacts } from "../diagnosis/types";
import type { Hub } from "./hub/hub";
import { agentParts } from "./agentParts";
import { captureLastRun } from "./operations/lastRun";
import { readinessOf } from "./readiness/index";

export async function diagnoseUnit(hub: Hub, name: string, unitGlobs: string[]): Promise<Diagnosis> {
  const nowMs = Date.now();
  const [unit, journal] = await Promise.all([hub.host.systemd.get(name), hub.host.systemd.journal(name, 50).catch(() => [])]);
  const facts: DiagnosisFacts = {
    nowMs,
    unit,
    requestedName: name,
    recentTransitions: hub.timeline(name).transitions.slice(-50),
    gpuNow: hub.gpuNow(),
    gpuRecent: hub.gpuRecent(nowMs - 60_000),
    journal,
    job: unit?.job ?? null,
    recentJobs: hub.recentJobs(name),
    // GPU faults of its PIDs or on the GPUs of its last run; the crash-loop marker
    faults: agentParts(hub).faults.list({
      unit: name,
      gpuUuids: captureLastRun(name, hub.gpuNow(), hub.gpuHistory.since(nowMs - 24 * 3600_000)).gpus.map((g) => g.uuid),
    }),
    crashLoop: agentParts(hub).crashLoops.marker(name),
    // whether the engine serves (its stage, its fatal error), and actions incl. starts systemd refused
    readiness: readinessOf(hub)?.readiness(name) ?? null,
    recentActions: hub.recentActions(500).filter((a) => a.unit === name),
  };
  const diagnosis = withUnitFileFact(diagnose(facts), unit);
  // Only "dependency-failed" uses the required units' state: read it (bus calls, read-only,
  // also for units outside the allow-list) only then, and let the engine name the failed one.
  // "stopped": a required unit that is not installed would make a start fail (start-refused).
  if ((diagnosis.code !== "dependency-failed" && diagnosis.code !== "stopped") || !unit) return diagnosis;
  const dependencies = await readDependencyStates(unit, hub.host.systemd, unitGlobs);
  return dependencies ? withUnitFileFact(diagnose({ ...facts, dependencies }), unit) : diagnosis;
}

/** NeedDaemonReload: whatever the case, the file on disk is not what systemd runs (units.file shows both). */
export function withUnitFileFact(d: Diagnosis, unit: UnitDetail | null): Diagnosis {
  if (!unit?.needDaemonReload) return d;
  const fact = {
    label: "Unit file",
    value: `the file on disk differs from what systemd runs (NeedDaemonReload): ${unit.fragmentPath || "the unit"} or a drop-in changed since systemd loaded it; \`systemctl daemon-reload\` makes systemd read it`,
    source: "systemd" as const,
  };
  return { ...d, evidence: [fact, ...d.evidence] };
}
