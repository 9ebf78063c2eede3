/**
 * A restart loop systemd will never end: the agent saw N restarts in M minutes
 * (GPUDECK_CRASH_LOOP) and the unit's start limit cannot trip (Restart=always with RestartSec ≥
 * interval / burst, or the limit disabled). Each cycle may leave GPU memory behind until the
 * host thrashes, so the answer offers "stop the loop" (stop + reset-failed). Loops the start
 * limit will end are the restart-cycle case's.
 */
import type { Diagnosis } from "../../contract/diagnosis";
import { formatDurationWords, formatUsecSetting, plural } from "../../contract/format";
import type { DiagnosisCase } from "../case";
import type { DiagnosisContext } from "../context";
import { stateEvidence } from "../evidence";
import { lastFailure } from "../lastFailure";
import { restartPolicyEvidence } from "../restarts";

export const endlessLoopCase: DiagnosisCase = {
  id: "endless-loop",
  codes: ["crash-loop-endless"],
  diagnose: (ctx) => {
    const m = ctx.facts.crashLoop;
    if (!m || m.startLimitStops !== false) return null;
    return endless(ctx, m.restarts, m.windowMs, m.rule, m.firstAtUsec / 1000);
  },
};

function endless(ctx: DiagnosisContext, restarts: number, windowMs: number, rule: string, firstAtMs: number): Diagnosis {
  const u = ctx.unit;
  const f = lastFailure(ctx);
  const off = u.startLimitBurst <= 0 || u.startLimitIntervalUsec <= 0;
  const why = off
    ? "its start limit is off (StartLimitBurst=0 or StartLimitIntervalSec=0)"
    : `RestartSec=${formatDurationWords(u.restartUsec / 1000)} × StartLimitBurst=${u.startLimitBurst} is not shorter than StartLimitIntervalSec=${formatUsecSetting(u.startLimitIntervalUsec)}, so the start limit can never trip`;
  return {
    severity: "critical",
    code: "crash-loop-endless",
    headline: `Crash loop systemd will never stop: ${plural(restarts, "restart")} in ${formatDurationWords(Math.max(ctx.now - firstAtMs, 1000))} (rule ${rule}), last failure: ${f.summary}; Restart=${u.restart || "no"} and ${why}.`,
    evidence: [
      stateEvidence(ctx),
      ...f.evidence.filter((e) => e.label !== "State"),
      ...restartPolicyEvidence(ctx),
      { label: "Crash-loop rule", value: `${rule} (${plural(restarts, "restart")} within ${formatDurationWords(windowMs)})`, source: "gpudeck" },
    ],
    nextStep: {
      text: "Stop the loop (stop + reset-failed) while you fix the cause in the log lines; each cycle may leave GPU memory behind.",
      action: { kind: "stop-loop", unit: ctx.name },
    },
  };
}
