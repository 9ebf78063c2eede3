/** TimeoutStartSec=: when a start in progress times out, as evidence and as a headline clause. */
import type { Evidence } from "../contract/diagnosis";
import { formatClock, formatDurationWords, formatUsecSetting, isInfiniteUsec } from "../contract/format";
import type { DiagnosisContext } from "./context";

export function hasTimeout(usec: number): boolean {
  return !isInfiniteUsec(usec);
}

/**
 * When the start times out. systemd re-arms the start timer each time it spawns a start command
 * (service_spawn), so with several ExecStartPre= lines the budget restarts per command: the
 * deadline counts from the later of entering the phase and the current control process's start.
 */
export function startDeadlineMs(ctx: DiagnosisContext): number | null {
  const u = ctx.unit;
  if (!hasTimeout(u.timeoutStartUsec)) return null;
  const entered = ctx.stateEnteredMs;
  const controlStart = u.controlProcess?.startedAtMs;
  const armed =
    entered !== null && controlStart !== undefined && controlStart <= ctx.now
      ? Math.max(entered, controlStart)
      : (entered ?? (controlStart !== undefined && controlStart <= ctx.now ? controlStart : null));
  return armed === null ? null : armed + u.timeoutStartUsec / 1000;
}

export function timeoutStartEvidence(ctx: DiagnosisContext, deadline: number | null): Evidence {
  const setting = formatUsecSetting(ctx.unit.timeoutStartUsec);
  if (deadline === null) {
    return { label: "TimeoutStartSec", value: hasTimeout(ctx.unit.timeoutStartUsec) ? `${setting} (start time unknown)` : setting, source: "systemd" };
  }
  const left = deadline - ctx.now;
  return {
    label: "TimeoutStartSec",
    value: left >= 0 ? `${setting}; ${formatDurationWords(left)} left (at ${formatClock(deadline)})` : `${setting}; passed ${formatDurationWords(left)} ago`,
    source: "systemd",
  };
}

/** " — 12 s before TimeoutStartSec" and the like; etaMs is when the awaited event comes, if known. */
export function timeoutClause(ctx: DiagnosisContext, deadline: number | null, etaMs: number | null): string {
  if (!hasTimeout(ctx.unit.timeoutStartUsec)) return " (no TimeoutStartSec)";
  if (deadline === null) return "";
  const left = deadline - ctx.now;
  if (left < 0) return ` — TimeoutStartSec already passed ${formatDurationWords(left)} ago`;
  if (etaMs === null) return ` — TimeoutStartSec in ${formatDurationWords(left)}`;
  const margin = left - etaMs;
  return margin >= 0
    ? ` — ${formatDurationWords(margin)} before TimeoutStartSec`
    : ` — ${formatDurationWords(margin)} after TimeoutStartSec (in ${formatDurationWords(left)}), so the start will time out first`;
}
