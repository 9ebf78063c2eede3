/**
 * A unit's readiness transitions (state and stage changes from `units.timeline().readiness`, and
 * what arrived live since) as segments of the readiness lane for a time window. Pure: no React,
 * no clock; the caller passes "now". Shaped like ./segments.ts for the state lane.
 */
import { formatDuration } from "@/server/contract/format";
import type { Readiness, ReadinessState, ReadinessTransition } from "@/server/contract/readiness";

export interface ReadinessSegment {
  /** inside the window (clipped), ms */
  startMs: number;
  endMs: number;
  /** unclipped; null when it began before the known history */
  realStartMs: number | null;
  /** unclipped; null while it is the current state */
  realEndMs: number | null;
  state: ReadinessState;
  stage: string | null;
  /** the stage's progress when it began, as recorded */
  progress: { done: number; total: number } | null;
  reason: string | null;
  open: boolean;
  clippedStart: boolean;
  clippedEnd: boolean;
}

interface Full {
  startMs: number;
  endMs: number;
  state: ReadinessState;
  stage: string | null;
  progress: ReadinessSegment["progress"];
  reason: string | null;
  open: boolean;
}

/** What the box and the lists call it: the stage while loading ("loading weights"), else the state in words. */
export function readinessSegmentName(s: { state: ReadinessState; stage: string | null }): string {
  if (s.state === "loading") return s.stage ?? "loading";
  if (s.state === "not-serving") return "not serving";
  if (s.state === "failed") return "engine failed";
  return s.state;
}

const same = (a: { state: ReadinessState; stage: string | null }, b: { state: ReadinessState; stage: string | null }) =>
  a.state === b.state && (a.stage ?? null) === (b.stage ?? null);

/** Live readiness as a transition, for the current state when the history does not have it yet. */
export function currentAsTransition(unit: string, r: Readiness): ReadinessTransition {
  const atMs = r.state === "loading" && r.stageSinceMs != null ? Math.max(r.sinceMs, r.stageSinceMs) : r.sinceMs;
  return { unit, atMs, from: null, to: { state: r.state, stage: r.stage }, engine: r.engine, progress: r.progress, reason: r.reason };
}

/** Every state in time order, unclipped; a transition that repeats the state and stage extends the previous segment. */
export function fullReadiness(transitions: readonly ReadinessTransition[], nowMs: number, current?: Readiness): Full[] {
  const sorted = transitions
    .map((t, i) => ({ t, i }))
    .sort((a, b) => a.t.atMs - b.t.atMs || a.i - b.i)
    .map((x) => x.t);
  const last = sorted.at(-1);
  if (current && (!last || (!same(last.to, current) && currentAsTransition("", current).atMs >= last.atMs))) sorted.push(currentAsTransition("", current));
  const out: Full[] = [];
  const first = sorted[0];
  if (first?.from) {
    out.push({
      startMs: Number.NEGATIVE_INFINITY,
      endMs: first.atMs,
      state: first.from.state,
      stage: first.from.stage,
      progress: null,
      reason: null,
      open: false,
    });
  }
  for (const t of sorted) {
    const prev = out.at(-1);
    if (prev && Number.isFinite(prev.startMs) && same(prev, t.to)) continue;
    if (prev) {
      prev.endMs = t.atMs;
      prev.open = false;
    }
    out.push({ startMs: t.atMs, endMs: t.atMs, state: t.to.state, stage: t.to.stage, progress: t.progress, reason: t.reason, open: true });
  }
  const tail = out.at(-1);
  if (tail) tail.endMs = Math.max(nowMs, tail.startMs);
  return out;
}

/** Segments in [fromMs, toMs], clipped; zero-length ones are kept (the layout gives them a sliver). */
export function buildReadinessSegments(
  transitions: readonly ReadinessTransition[],
  fromMs: number,
  toMs: number,
  nowMs: number,
  current?: Readiness,
): ReadinessSegment[] {
  if (!(toMs > fromMs)) return [];
  return fullReadiness(transitions, nowMs, current).flatMap((s) => {
    const zero = s.endMs === s.startMs;
    const visible = zero ? s.startMs >= fromMs && s.startMs <= toMs : s.endMs > fromMs && s.startMs < toMs;
    if (!visible) return [];
    return [
      {
        startMs: Math.max(s.startMs, fromMs),
        endMs: Math.min(s.endMs, toMs),
        realStartMs: Number.isFinite(s.startMs) ? s.startMs : null,
        realEndMs: s.open ? null : s.endMs,
        state: s.state,
        stage: s.stage,
        progress: s.progress,
        reason: s.reason,
        open: s.open,
        clippedStart: s.startMs < fromMs,
        clippedEnd: s.endMs > toMs,
      },
    ];
  });
}

export function readinessDurationMs(s: ReadinessSegment, nowMs: number): number | null {
  if (s.realStartMs == null) return null;
  return (s.realEndMs ?? Math.max(nowMs, s.realStartMs)) - s.realStartMs;
}

/** "Engine now serving for 2 min 10 s. In view: 5 segments; serving 1×, loading weights 1×, …" */
export function summarizeReadiness(segments: readonly ReadinessSegment[], nowMs: number): string {
  if (segments.length === 0) return "";
  const current = segments.find((s) => s.open);
  const parts: string[] = [];
  if (current) {
    const d = readinessDurationMs(current, nowMs);
    parts.push(`Engine now ${readinessSegmentName(current)}${d == null ? "" : ` for ${formatDuration(d)}`}.`);
  }
  const counts = new Map<string, number>();
  for (const s of segments) counts.set(readinessSegmentName(s), (counts.get(readinessSegmentName(s)) ?? 0) + 1);
  parts.push(`Readiness in view: ${[...counts.entries()].map(([n, c]) => `${n} ${c}×`).join(", ")}.`);
  return parts.join(" ");
}

/** Live readiness transitions merged into the history: time order, one per change (a live copy of a recorded one is dropped). */
export function mergeReadiness(history: readonly ReadinessTransition[], live: readonly ReadinessTransition[]): ReadinessTransition[] {
  const all = [...history, ...live].sort((a, b) => a.atMs - b.atMs);
  const out: ReadinessTransition[] = [];
  for (const t of all) {
    const prev = out.at(-1);
    // the same change seen twice (recorded by the agent, and from the live stream): keep the first
    if (prev && same(prev.to, t.to) && Math.abs(t.atMs - prev.atMs) < 5_000) continue;
    out.push(t);
  }
  return out;
}
