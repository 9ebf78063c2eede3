/**
 * Case 6: a Restart= loop in progress (auto-restart, or the transient failed/inactive systemd
 * passes through inside the cycle), and the loop's end when the start limit stopped it.
 */
import type { Diagnosis } from "../../contract/diagnosis";
import { formatDurationWords, formatUsecSetting, isInfiniteUsec } from "../../contract/format";
import type { DiagnosisCase } from "../case";
import { msToUsec, type DiagnosisContext } from "../context";
import { capitalize, logEvidence, stateEvidence } from "../evidence";
import { samePair, startLimitLine } from "../history";
import { lastFailure } from "../lastFailure";
import { allRestarts, restartPolicyEvidence, restartsPhrase, restartWouldApply } from "../restarts";

/** Asked before every other case of the failed and inactive states: inside a cycle they are not final. */
export const restartCycleCase: DiagnosisCase = {
  id: "restart-cycle",
  codes: ["auto-restart-pending", "crash-loop"],
  diagnose: (ctx) => (inRestartCycle(ctx) ? crashLoopCycling(ctx) : null),
};

/** A final failed state that is not a dependency's fault (that case is asked first). */
export const startLimitCase: DiagnosisCase = {
  id: "start-limit",
  codes: ["start-limit-hit"],
  diagnose: (ctx) => (ctx.unit.activeState === "failed" && isStartLimitEnd(ctx) ? startLimitHit(ctx) : null),
};

function inRestartCycle(ctx: DiagnosisContext): boolean {
  const u = ctx.unit;
  const last = ctx.lastTransition;
  switch (u.activeState) {
    case "activating":
      return u.subState === "auto-restart";
    case "failed":
      return last !== null && last.to.activeState === "failed" && last.inRestartCycle;
    case "inactive":
      return last !== null && last.inRestartCycle && samePair(last.to, u);
    default:
      return false;
  }
}

function crashLoopCycling(ctx: DiagnosisContext): Diagnosis {
  const u = ctx.unit;
  const f = lastFailure(ctx);
  const history = allRestarts(ctx);
  let etaMs: number | undefined;
  let next = "";
  if (u.activeState === "activating" && u.subState === "auto-restart") {
    const entered = ctx.stateEnteredMs;
    if (entered !== null) {
      etaMs = Math.max(0, entered + u.restartUsec / 1000 - ctx.now);
      next = `, next restart in ${formatDurationWords(etaMs)}`;
    }
  } else {
    next = ", restarting now";
  }
  const first = history.count <= 1;
  return {
    severity: first ? "warning" : "critical",
    code: first ? "auto-restart-pending" : "crash-loop",
    headline: first
      ? `${capitalize(f.summary)}; systemd restarts it${next ? next.replace(/^, /, " — ") : ""} (Restart=${u.restart}).`
      : `Crash loop: ${f.summary}; ${restartsPhrase(ctx, history)}${next}.`,
    evidence: [stateEvidence(ctx), ...f.evidence, ...restartPolicyEvidence(ctx)],
    nextStep: first ? undefined : { text: "Stop it to end the loop while you fix the cause shown in the log lines.", action: { kind: "stop", unit: ctx.name } },
    etaMs,
  };
}

function startLimitHit(ctx: DiagnosisContext): Diagnosis {
  const u = ctx.unit;
  const f = lastFailure(ctx);
  const history = allRestarts(ctx);
  const limit =
    u.startLimitBurst > 0 && !isInfiniteUsec(u.startLimitIntervalUsec)
      ? ` (StartLimitBurst=${u.startLimitBurst} per ${formatUsecSetting(u.startLimitIntervalUsec)})`
      : "";
  const limitLine = startLimitLine(ctx.facts.journal);
  return {
    severity: "critical",
    code: "start-limit-hit",
    headline: `Start limit hit: systemd gave up after it ${restartsPhrase(ctx, history)}${limit}; the last attempt failed because ${f.summary}.`,
    evidence: [stateEvidence(ctx), ...f.evidence, ...restartPolicyEvidence(ctx), ...(limitLine ? logEvidence([limitLine]) : [])],
    nextStep: {
      text: "Fix the cause shown in the log lines, then reset the failed state (clears the start limit) and start it again.",
      action: { kind: "reset-failed", unit: ctx.name },
    },
  };
}

/** A final failed state is the end of a Restart= loop when the start limit stopped it. */
function isStartLimitEnd(ctx: DiagnosisContext): boolean {
  const u = ctx.unit;
  if (u.result === "start-limit-hit") return true;
  const line = startLimitLine(ctx.facts.journal);
  const entered = ctx.stateEnteredMs;
  if (line && (entered === null || line.atUsec >= msToUsec(entered) - 2_000_000)) return true;
  const history = allRestarts(ctx);
  if (history.count === 0) return false;
  if (u.startLimitBurst > 0 && u.nRestarts >= u.startLimitBurst) return true;
  // Restart= would have restarted this result; only the start limit stops it.
  return history.observed > 0 && restartWouldApply(u.restart, u.result);
}
