/**
 * States with nothing (or nothing yet) wrong: a start job queued, stopped, reloading, in
 * maintenance, and the fallback for a state gpudeck has no diagnosis for.
 */
import type { Diagnosis, Evidence } from "../../contract/diagnosis";
import { formatDurationWords, formatState, formatTimestamp } from "../../contract/format";
import type { DiagnosisCase, FallbackCase } from "../case";
import { sinceState, usecToMs, type DiagnosisContext } from "../context";
import { ago, stateEvidence } from "../evidence";
import { cldName, exitPhraseOf } from "../lastFailure";

const isStartJob = (job: { type: string } | null): job is { id: number; type: string } => job !== null && (job.type === "start" || job.type === "restart");

/** An inactive unit, after the restart-cycle and dependency cases. */
export const startQueuedCase: DiagnosisCase = {
  id: "start-queued",
  codes: ["start-queued"],
  diagnose(ctx) {
    if (ctx.unit.activeState !== "inactive") return null;
    // The job in the unit's detail first, else the one the facts carry.
    const job = isStartJob(ctx.unit.job) ? ctx.unit.job : isStartJob(ctx.facts.job) ? ctx.facts.job : null;
    return job ? startQueued(ctx, job) : null;
  },
};

/** The last case of the inactive state: it always answers there. */
export const stoppedCase: DiagnosisCase = {
  id: "stopped",
  codes: ["stopped"],
  diagnose: (ctx) => (ctx.unit.activeState === "inactive" ? stopped(ctx) : null),
};

export const reloadingCase: DiagnosisCase = {
  id: "reloading",
  codes: ["reloading"],
  diagnose: (ctx) =>
    ctx.unit.activeState !== "reloading"
      ? null
      : {
          severity: "info",
          code: "reloading",
          headline: `Reloading for ${formatDurationWords(sinceState(ctx))} (ExecReload running); the service keeps running meanwhile.`,
          evidence: [stateEvidence(ctx)],
        },
};

export const maintenanceCase: DiagnosisCase = {
  id: "maintenance",
  codes: ["maintenance"],
  diagnose: (ctx) =>
    ctx.unit.activeState !== "maintenance"
      ? null
      : {
          severity: "info",
          code: "maintenance",
          headline: `In maintenance (${ctx.unit.subState}) for ${formatDurationWords(sinceState(ctx))}: systemd is cleaning its resources and will not start it meanwhile.`,
          evidence: [stateEvidence(ctx)],
        },
};

/** Any state pair no other case recognises (an activating sub-state or an ActiveState gpudeck does not know). */
export const unknownStateCase: FallbackCase = {
  id: "unknown-state",
  codes: ["unknown-state"],
  diagnose: (ctx) => ({
    severity: "info",
    code: "unknown-state",
    headline: `State ${formatState(ctx.unit)} for ${formatDurationWords(sinceState(ctx))}: gpudeck has no diagnosis for this state.`,
    evidence: [stateEvidence(ctx), { label: "Result", value: ctx.unit.result || "unknown", source: "systemd" }],
  }),
};

function startQueued(ctx: DiagnosisContext, job: { id: number; type: string }): Diagnosis {
  return {
    severity: "info",
    code: "start-queued",
    headline: `A ${job.type} job (#${job.id}) is queued but systemd has not begun it: it is waiting for units it is ordered after (After=) to finish starting.`,
    evidence: [stateEvidence(ctx), { label: "Job", value: `#${job.id} ${job.type}, waiting`, source: "systemd" }],
  };
}

function stopped(ctx: DiagnosisContext): Diagnosis {
  const u = ctx.unit;
  const since = usecToMs(u.timestamps.inactiveEnterUsec) ?? ctx.stateEnteredMs;
  const evidence: Evidence[] = [stateEvidence(ctx)];
  const exit = cldName(u.execMainCode);
  if (exit && u.execMainExitUsec > 0) {
    evidence.push({
      label: "Last exit",
      value: `main process ${exitPhraseOf(exit, u.execMainStatus)} at ${formatTimestamp(u.execMainExitUsec / 1000)}`,
      source: "systemd",
    });
  }
  if (u.unitFileState) evidence.push({ label: "UnitFileState", value: u.unitFileState, source: "systemd" });
  const ranBefore = u.timestamps.activeExitUsec > 0 || u.execMainStartUsec > 0;
  return {
    severity: "info",
    code: "stopped",
    headline:
      since !== null && ranBefore
        ? `Stopped ${ago(ctx, since)} (since ${formatTimestamp(since)}); nothing is wrong, it is just not running.`
        : "Not running and not started since systemd loaded it; nothing is wrong.",
    evidence,
    nextStep: { text: "Start it if it should be running.", action: { kind: "start", unit: ctx.name } },
  };
}
