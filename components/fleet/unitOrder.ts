/**
 * The order of the unit lists: what needs someone first, whichever host it is on. Failed units,
 * then stuck ones (a Restart= loop, or starting/stopping for longer than anyone should wait),
 * then units changing state, running, and stopped. A unit systemd calls running whose engine
 * does not serve yet (loading) or any more (not answering) is still starting, as far as its
 * clients can tell: it sorts with the starting units, and is stuck after as long; one whose
 * engine logged a fatal error while the process lives on is stuck at once.
 */
import { runningButNotServing } from "@/components/readiness/readinessText";
import type { UnitSummary } from "@/server/contract/types";

export const UNIT_GROUPS = ["failed", "stuck", "changing", "active", "inactive"] as const;
export type UnitGroup = (typeof UNIT_GROUPS)[number];

/** Starting or stopping longer than this is stuck (a large model loads in a few minutes). */
export const STUCK_AFTER_MS = 5 * 60_000;

const CHANGING = new Set(["activating", "deactivating", "reloading"]);

/** How long the unit has been in its state, or NaN when systemd did not say. */
export function timeInStateMs(u: Pick<UnitSummary, "stateChangeUsec">, nowMs: number): number {
  return u.stateChangeUsec ? nowMs - u.stateChangeUsec / 1000 : NaN;
}

export function unitGroup(u: UnitSummary, nowMs: number): UnitGroup {
  if (u.activeState === "failed") return "failed";
  if (CHANGING.has(u.activeState)) {
    return u.subState === "auto-restart" || timeInStateMs(u, nowMs) > STUCK_AFTER_MS ? "stuck" : "changing";
  }
  if (u.activeState === "active") {
    const r = u.readiness;
    if (r?.state === "failed") return "stuck";
    if (runningButNotServing(r)) return nowMs - r!.sinceMs > STUCK_AFTER_MS ? "stuck" : "changing";
    return "active";
  }
  return "inactive";
}

export function needsAttention(u: UnitSummary, nowMs: number): boolean {
  const g = unitGroup(u, nowMs);
  return g === "failed" || g === "stuck";
}

/** Failed, stuck, changing, active, inactive; within a group by host, then by name. */
export function sortUnits<T extends UnitSummary & { host?: string }>(units: readonly T[], nowMs: number): T[] {
  const rank = new Map(units.map((u) => [u, UNIT_GROUPS.indexOf(unitGroup(u, nowMs))]));
  return [...units].sort((a, b) => rank.get(a)! - rank.get(b)! || (a.host ?? "").localeCompare(b.host ?? "") || a.name.localeCompare(b.name));
}
