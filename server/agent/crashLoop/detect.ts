/**
 * Whether a unit is in a restart loop right now, from its transitions (pure): at least
 * `rule.restarts` automatic restarts (transitions into activating/auto-restart) within the last
 * `rule.windowMs`, and the unit not ended since — stopped by hand (inactive, not inside a
 * Restart= cycle) or given up on by systemd (failed outside a cycle, e.g. the start limit).
 * And whether systemd's start limit can ever end such a loop.
 */
import type { CrashLoopMarker } from "../../contract/faults";
import type { UnitDetail, UnitTransition } from "../../contract/types";
import { autoRestarts } from "../../diagnosis/history";
import type { CrashLoopRule } from "./rule";

export function detectCrashLoop(transitions: readonly UnitTransition[], nowMs: number, rule: CrashLoopRule): Omit<CrashLoopMarker, "startLimitStops"> | null {
  const last = transitions.at(-1);
  if (!last) return null;
  const ended = (last.to.activeState === "inactive" || last.to.activeState === "failed") && !last.inRestartCycle;
  if (ended) return null;
  const since = (nowMs - rule.windowMs) * 1000;
  const restarts = autoRestarts(transitions).filter((t) => t.atUsec >= since);
  if (restarts.length < rule.restarts) return null;
  return { restarts: restarts.length, windowMs: rule.windowMs, rule: rule.text, firstAtUsec: restarts[0]!.atUsec, lastAtUsec: restarts.at(-1)!.atUsec };
}

type LimitSettings = Pick<UnitDetail, "restart" | "restartUsec" | "startLimitBurst" | "startLimitIntervalUsec">;

const USEC_INFINITY = 2 ** 64 - 1;

/**
 * Can StartLimitBurst/StartLimitIntervalSec stop an automatic restart loop? systemd refuses a
 * start when more than `burst` starts fall within `interval`; with restarts at least RestartSec
 * apart, burst+1 starts take at least burst × RestartSec, so the limit can only trip when that
 * is shorter than the interval (the default 5 per 10 s never trips with RestartSec ≥ 2 s).
 * A disabled limit (burst 0 or interval 0) never trips. Restart=no: systemd does not loop.
 */
export function startLimitCanStop(u: LimitSettings): boolean {
  if (!u.restart || u.restart === "no") return true;
  const interval = u.startLimitIntervalUsec;
  if (u.startLimitBurst <= 0 || interval <= 0) return false;
  if (interval >= USEC_INFINITY) return true;
  return u.startLimitBurst * Math.max(0, u.restartUsec) < interval;
}
