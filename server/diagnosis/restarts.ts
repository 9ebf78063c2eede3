/** Restart= cycles: how often the unit restarted, and its restart policy as evidence. */
import type { Evidence } from "../contract/diagnosis";
import { formatDurationWords, formatUsecSetting, isInfiniteUsec, plural } from "../contract/format";
import { msToUsec, perCall, type DiagnosisContext } from "./context";
import { autoRestarts } from "./history";

export interface RestartHistory {
  /** NRestarts, or the restarts seen in the transitions when more. */
  count: number;
  /** Restarts seen in the transitions. */
  observed: number;
  firstAtMs: number | null;
}

/** Automatic restarts within the last windowMs (null = all recorded). */
export function restartHistory(ctx: DiagnosisContext, windowMs: number | null): RestartHistory {
  const restarts = autoRestarts(ctx.transitions).filter((t) => windowMs === null || t.atUsec >= msToUsec(ctx.now - windowMs));
  return {
    count: Math.max(ctx.unit.nRestarts, restarts.length),
    observed: restarts.length,
    firstAtMs: restarts.length > 0 ? restarts[0].atUsec / 1000 : null,
  };
}

/** Every recorded automatic restart, counted once per call. */
export const allRestarts = perCall((ctx) => restartHistory(ctx, null));

/** "restarted 5 times in 2 min" */
export function restartsPhrase(ctx: DiagnosisContext, h: RestartHistory): string {
  const span = h.firstAtMs !== null && h.observed > 1 ? ` in ${formatDurationWords(ctx.now - h.firstAtMs)}` : "";
  return `restarted ${plural(h.count, "time")}${span}`;
}

/** Whether Restart= (its value) restarts a unit whose run ended with this Result=. */
export function restartWouldApply(restart: string, result: string): boolean {
  switch (restart) {
    case "always":
      return true;
    case "on-success":
      return result === "success";
    case "on-failure":
      return result !== "success";
    case "on-abnormal":
      return ["signal", "core-dump", "timeout", "watchdog"].includes(result);
    case "on-abort":
      return ["signal", "core-dump"].includes(result);
    case "on-watchdog":
      return result === "watchdog";
    default:
      return false;
  }
}

export function restartPolicyEvidence(ctx: DiagnosisContext): Evidence[] {
  const u = ctx.unit;
  const limit =
    u.startLimitBurst > 0 && !isInfiniteUsec(u.startLimitIntervalUsec)
      ? `${plural(u.startLimitBurst, "start")} per ${formatUsecSetting(u.startLimitIntervalUsec)}`
      : "none";
  return [
    { label: "Restart", value: `${u.restart || "no"}, RestartSec=${formatDurationWords(u.restartUsec / 1000)}`, source: "systemd" },
    { label: "Start limit", value: limit, source: "systemd" },
    { label: "NRestarts", value: String(u.nRestarts), source: "systemd" },
  ];
}
