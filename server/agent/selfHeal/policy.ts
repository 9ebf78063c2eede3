/**
 * When self-heal restarts a unit, and when it holds back. Pure: time comes in with every call.
 *
 * It acts when all of these hold: healAfter is configured for the unit; systemd calls it active
 * (no job of its own queued); its engine served in this run and its readiness is now
 * `not-serving`; its probe has failed (every probe, in a row) for at least healAfter. It holds
 * back, saying why, while a GPU-aware operation runs for the unit (a person's, or its own), while
 * the crash-loop brake (the crash-loop marker) is on, and once it restarted the unit healMax
 * times in the last hour.
 */

export const HEAL_WINDOW_MS = 3600_000;

export interface HealSettings {
  healAfterMs: number;
  healMax: number;
}

export interface HealFacts {
  nowMs: number;
  activeState: string;
  subState: string;
  /** a systemd job is queued for the unit (someone's start/stop/restart) */
  jobRunning: boolean;
  readinessState: string;
  servedInRun: boolean;
  /** failed probes in a row, since the first of them */
  failing: { count: number; sinceMs: number } | null;
  /** a GPU-aware operation of the unit that has not ended */
  operation: { id: string; user: string; step: string } | null;
  crashLoop: boolean;
}

export type HealDecision =
  { kind: "wait" } | { kind: "heal"; failedForMs: number } | { kind: "held-back"; why: "operation" | "crash-loop" | "limit"; message: string };

/** Restarts per unit in the last hour. */
export class HealLimiter {
  private readonly at = new Map<string, number[]>();

  constructor(private readonly windowMs = HEAL_WINDOW_MS) {}

  recent(unit: string, nowMs: number): number[] {
    const list = (this.at.get(unit) ?? []).filter((t) => nowMs - t < this.windowMs);
    if (list.length === 0) this.at.delete(unit);
    else this.at.set(unit, list);
    return list;
  }

  record(unit: string, atMs: number): void {
    this.at.set(unit, [...this.recent(unit, atMs), atMs]);
  }

  /** When the oldest restart in the window leaves it (another may happen then), or null. */
  nextSlotMs(unit: string, nowMs: number): number | null {
    const first = this.recent(unit, nowMs)[0];
    return first === undefined ? null : first + this.windowMs;
  }
}

/** Whether the probe has failed long enough on a unit that was serving, and what stops a restart. */
export function decideHeal(f: HealFacts, s: HealSettings, restartsInWindow: number): HealDecision {
  if (f.activeState !== "active" || f.subState === "exited" || f.jobRunning) return { kind: "wait" };
  if (!f.servedInRun || f.readinessState !== "not-serving" || !f.failing) return { kind: "wait" };
  const failedForMs = f.nowMs - f.failing.sinceMs;
  if (failedForMs < s.healAfterMs) return { kind: "wait" };
  if (f.operation) {
    return {
      kind: "held-back",
      why: "operation",
      message: `Not restarted by self-heal: a GPU-aware operation by ${f.operation.user} is running (operation ${f.operation.id}, ${f.operation.step}).`,
    };
  }
  if (f.crashLoop) {
    return { kind: "held-back", why: "crash-loop", message: "Not restarted by self-heal: the unit is restarting in a loop (the crash-loop brake is on)." };
  }
  if (restartsInWindow >= s.healMax) {
    return {
      kind: "held-back",
      why: "limit",
      message: `Not restarted by self-heal: it already restarted it ${restartsInWindow === 1 ? "once" : `${restartsInWindow} times`} in the last hour (healMax ${s.healMax}).`,
    };
  }
  return { kind: "heal", failedForMs };
}
