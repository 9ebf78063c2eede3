/**
 * Uptime from a unit's history: the fraction of the observed time it was up, over 24 h, 7 d and
 * 30 d. "Up" is ActiveState active (or reloading) and, where the agent reports readiness, not
 * loading, not "not serving", not failed. Time before the first thing known of the unit is not
 * counted either way (the agent keeps 30 days; a unit added yesterday is judged on one day).
 * A group of units is up while any of them is (replicas of one service).
 */
import type { ReadinessState } from "../contract/readiness";
import type { UnitTransition } from "../contract/types";

export const WINDOWS = { "24h": 86_400_000, "7d": 7 * 86_400_000, "30d": 30 * 86_400_000 } as const;
export type WindowName = keyof typeof WINDOWS;

/** A step function: `up` holds from `atMs` until the next step; before the first step nothing is known. */
export interface Step {
  atMs: number;
  up: boolean;
}

const ACTIVE = new Set(["active", "reloading"]);
const NOT_SERVING = new Set<ReadinessState>(["loading", "not-serving", "failed"]);

/** The readiness changes the agent reports with a unit's timeline (absent from agents without readiness). */
export interface ReadinessStep {
  atMs: number;
  to: { state: ReadinessState };
}

/** One unit's steps from its transitions (and readiness changes, when there are any). */
export function unitSteps(transitions: readonly UnitTransition[], readiness: readonly ReadinessStep[] = []): Step[] {
  const points: { atMs: number; active?: boolean; serving?: boolean }[] = [
    ...transitions.map((t) => ({ atMs: t.atUsec / 1000, active: ACTIVE.has(t.to.activeState) })),
    ...readiness.map((r) => ({ atMs: r.atMs, serving: !NOT_SERVING.has(r.to.state) })),
  ].sort((a, b) => a.atMs - b.atMs);
  const steps: Step[] = [];
  let active: boolean | null = null;
  let serving = true;
  for (const p of points) {
    if (p.active !== undefined) active = p.active;
    if (p.serving !== undefined) serving = p.serving;
    if (active === null) continue; // readiness before anything is known of the unit's state
    const up = active && serving;
    if (steps.length && steps[steps.length - 1]!.atMs === p.atMs) steps[steps.length - 1]!.up = up;
    else if (!steps.length || steps[steps.length - 1]!.up !== up) steps.push({ atMs: p.atMs, up });
  }
  return steps;
}

/** Several units' steps merged: up while any is up; known once any is known. */
export function anySteps(perUnit: readonly Step[][]): Step[] {
  const events = perUnit.flatMap((steps, unit) => steps.map((s) => ({ ...s, unit }))).sort((a, b) => a.atMs - b.atMs);
  const state = new Map<number, boolean>();
  const out: Step[] = [];
  for (const e of events) {
    state.set(e.unit, e.up);
    const up = [...state.values()].some(Boolean);
    if (out.length && out[out.length - 1]!.atMs === e.atMs) out[out.length - 1]!.up = up;
    else if (!out.length || out[out.length - 1]!.up !== up) out.push({ atMs: e.atMs, up });
  }
  return out;
}

/** A span left out of uptime (planned maintenance): neither up nor down. */
export interface Excluded {
  startsAtMs: number;
  endsAtMs: number;
}

/** How much of [from, to) the excluded spans cover (they may overlap). */
function excludedWithin(from: number, to: number, excluded: readonly Excluded[]): number {
  const parts = excluded
    .map((e) => [Math.max(from, e.startsAtMs), Math.min(to, e.endsAtMs)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let total = 0;
  let end = -Infinity;
  for (const [a, b] of parts) {
    const start = Math.max(a, end);
    if (b > start) total += b - start;
    end = Math.max(end, b);
  }
  return total;
}

/** Fraction of [now − window, now] known to be up, among the time known at all (less the excluded spans); null when nothing is known of it. */
export function upFraction(steps: readonly Step[], nowMs: number, windowMs: number, excluded: readonly Excluded[] = []): number | null {
  const start = nowMs - windowMs;
  let known = 0;
  let up = 0;
  for (let i = 0; i < steps.length; i++) {
    const from = Math.max(steps[i]!.atMs, start);
    const to = Math.min(i + 1 < steps.length ? steps[i + 1]!.atMs : nowMs, nowMs);
    if (to <= from) continue;
    const span = to - from - excludedWithin(from, to, excluded);
    known += span;
    if (steps[i]!.up) up += span;
  }
  return known > 0 ? up / known : null;
}

export function uptimes(steps: readonly Step[], nowMs: number, excluded: readonly Excluded[] = []): Record<WindowName, number | null> {
  return {
    "24h": upFraction(steps, nowMs, WINDOWS["24h"], excluded),
    "7d": upFraction(steps, nowMs, WINDOWS["7d"], excluded),
    "30d": upFraction(steps, nowMs, WINDOWS["30d"], excluded),
  };
}
