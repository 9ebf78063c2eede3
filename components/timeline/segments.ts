/**
 * Turns a unit's transitions (systemd's µs timestamps) into swimlane segments for a time
 * window. Pure: no React, no clock; the caller passes "now".
 */
import type { UnitStatePair, UnitTransition, Usec } from "@/server/contract/types";
import { formatDuration } from "@/server/contract/format";
import { stateLabel } from "./stateStyle";

export { stateStyle, stateLabel, stateStyleKey, stateSortRank, STATE_STYLE_KEYS } from "./stateStyle";
export type { StateStyle, StateStyleKey, StatePattern } from "./stateStyle";

export interface TimelineSegment {
  /** Start and end inside the window (clipped), ms since the epoch. */
  startMs: number;
  endMs: number;
  /** Where the state really began, unclipped; null when it began before the known history. */
  realStartMs: number | null;
  /** Where it really ended, unclipped; null while it is still the current state. */
  realEndMs: number | null;
  /** systemd's exact timestamps of the transitions that began / ended it (µs), when known. */
  startUsec: Usec | null;
  endUsec: Usec | null;
  activeState: string;
  subState: string;
  /** systemd's Result at the transition into this state ("" when unknown). */
  result: string;
  inRestartCycle: boolean;
  /** Still the unit's current state (ends at "now"). */
  open: boolean;
  /** The state is known only from a later transition's `from`; its start is unknown. */
  startUnknown: boolean;
  /** Cut by the window edges. */
  clippedStart: boolean;
  clippedEnd: boolean;
  nRestarts: number | null;
  mainPid: number | null;
  controlPid: number | null;
}

/** Used only when there are no transitions at all: the unit's current state as last read. */
export interface CurrentStateFallback extends UnitStatePair {
  /** StateChangeTimestamp in µs; 0 = unknown */
  sinceUsec: Usec;
  result?: string;
}

interface FullSegment {
  startMs: number; // -Infinity when unknown
  endMs: number;
  startUsec: Usec | null;
  endUsec: Usec | null;
  activeState: string;
  subState: string;
  result: string;
  inRestartCycle: boolean;
  open: boolean;
  startUnknown: boolean;
  nRestarts: number | null;
  mainPid: number | null;
  controlPid: number | null;
}

const usecToMs = (usec: Usec) => usec / 1000;

function sameState(a: FullSegment, t: UnitTransition): boolean {
  return a.activeState === t.to.activeState && a.subState === t.to.subState && a.result === t.result && a.inRestartCycle === t.inRestartCycle;
}

/**
 * Every state the transitions describe, unclipped, in time order. A state repeated by a
 * transition that changes nothing we show (e.g. only NRestarts moved) extends the previous one.
 */
export function fullSegments(transitions: readonly UnitTransition[], nowMs: number, fallback?: CurrentStateFallback): FullSegment[] {
  if (transitions.length === 0) {
    if (!fallback) return [];
    const known = fallback.sinceUsec > 0;
    return [
      {
        startMs: known ? usecToMs(fallback.sinceUsec) : Number.NEGATIVE_INFINITY,
        endMs: Math.max(nowMs, known ? usecToMs(fallback.sinceUsec) : nowMs),
        startUsec: known ? fallback.sinceUsec : null,
        endUsec: null,
        activeState: fallback.activeState,
        subState: fallback.subState,
        result: fallback.result ?? "",
        inRestartCycle: false,
        open: true,
        startUnknown: !known,
        nRestarts: null,
        mainPid: null,
        controlPid: null,
      },
    ];
  }

  // Stable sort by systemd's timestamp: two transitions in the same µs keep arrival order.
  const sorted = transitions
    .map((t, i) => ({ t, i }))
    .sort((a, b) => a.t.atUsec - b.t.atUsec || a.i - b.i)
    .map((x) => x.t);

  const out: FullSegment[] = [];
  const first = sorted[0]!;
  if (first.from) {
    // The first recorded transition tells us what came before it, not when that began.
    out.push({
      startMs: Number.NEGATIVE_INFINITY,
      endMs: usecToMs(first.atUsec),
      startUsec: null,
      endUsec: first.atUsec,
      activeState: first.from.activeState,
      subState: first.from.subState,
      result: "",
      inRestartCycle: false,
      open: false,
      startUnknown: true,
      nRestarts: null,
      mainPid: null,
      controlPid: null,
    });
  }

  for (const t of sorted) {
    const prev = out[out.length - 1];
    const atMs = usecToMs(t.atUsec);
    if (prev && !prev.startUnknown && sameState(prev, t)) {
      // Nothing visible changed: keep the earlier start, take the newer counters.
      prev.nRestarts = t.nRestarts;
      prev.mainPid = t.mainPid;
      prev.controlPid = t.controlPid;
      continue;
    }
    if (prev) {
      prev.endMs = atMs;
      prev.endUsec = t.atUsec;
      prev.open = false;
    }
    out.push({
      startMs: atMs,
      endMs: atMs, // set by the next transition or "now" below
      startUsec: t.atUsec,
      endUsec: null,
      activeState: t.to.activeState,
      subState: t.to.subState,
      result: t.result,
      inRestartCycle: t.inRestartCycle,
      open: true,
      startUnknown: false,
      nRestarts: t.nRestarts,
      mainPid: t.mainPid,
      controlPid: t.controlPid,
    });
  }
  const last = out[out.length - 1]!;
  // The browser's clock may lag the agent's: never let the current state end before it began.
  last.endMs = Math.max(nowMs, last.startMs);
  return out;
}

/**
 * Segments visible in [fromMs, toMs], clipped to it. The state in force at fromMs comes from
 * the last transition before the window (or, failing that, from the first transition's
 * `from`). Zero-length states (failed → auto-restart in the same µs) are kept: they are
 * real steps, and the renderer gives them a minimum width.
 */
export function buildSegments(
  transitions: readonly UnitTransition[],
  fromMs: number,
  toMs: number,
  nowMs: number,
  fallback?: CurrentStateFallback,
): TimelineSegment[] {
  if (!(toMs > fromMs)) return [];
  const out: TimelineSegment[] = [];
  for (const s of fullSegments(transitions, nowMs, fallback)) {
    const zeroLength = s.endMs === s.startMs;
    const visible = zeroLength ? s.startMs >= fromMs && s.startMs <= toMs : s.endMs > fromMs && s.startMs < toMs;
    if (!visible) continue;
    const startMs = Math.max(s.startMs, fromMs);
    const endMs = Math.min(s.endMs, toMs);
    out.push({
      startMs,
      endMs,
      realStartMs: Number.isFinite(s.startMs) ? s.startMs : null,
      realEndMs: s.open ? null : s.endMs,
      startUsec: s.startUsec,
      endUsec: s.endUsec,
      activeState: s.activeState,
      subState: s.subState,
      result: s.result,
      inRestartCycle: s.inRestartCycle,
      open: s.open,
      startUnknown: s.startUnknown,
      clippedStart: s.startMs < fromMs,
      clippedEnd: s.endMs > toMs,
      nRestarts: s.nRestarts,
      mainPid: s.mainPid,
      controlPid: s.controlPid,
    });
  }
  return out;
}

/** How long the state lasted (or has lasted until now), unclipped; null when its start is unknown. */
export function segmentDurationMs(s: TimelineSegment, nowMs: number): number | null {
  if (s.realStartMs == null) return null;
  const end = s.realEndMs ?? Math.max(nowMs, s.realStartMs);
  return end - s.realStartMs;
}

/**
 * One sentence for screen readers and the figure's aria-label:
 * "Now activating (start-pre) for 34 s. In view: 4 segments; active (running): 2 times, 41 min 10 s; …".
 */
export function summarizeSegments(segments: readonly TimelineSegment[], nowMs: number): string {
  if (segments.length === 0) return "No state history in this time range.";
  const parts: string[] = [];
  const current = segments.find((s) => s.open);
  if (current) {
    const d = segmentDurationMs(current, nowMs);
    parts.push(`Now ${stateLabel(current.activeState, current.subState)}${d == null ? "" : ` for ${formatDuration(d)}`}.`);
  }
  const totals = new Map<string, { count: number; ms: number }>();
  for (const s of segments) {
    const label = stateLabel(s.activeState, s.subState);
    const t = totals.get(label) ?? { count: 0, ms: 0 };
    t.count += 1;
    t.ms += s.endMs - s.startMs;
    totals.set(label, t);
  }
  const listed = [...totals.entries()]
    .sort((a, b) => b[1].ms - a[1].ms)
    .map(([label, t]) => `${label}: ${t.count === 1 ? "once" : `${t.count} times`}, ${formatDuration(t.ms)}`);
  parts.push(`In view: ${segments.length} segment${segments.length === 1 ? "" : "s"}; ${listed.join("; ")}.`);
  return parts.join(" ");
}
