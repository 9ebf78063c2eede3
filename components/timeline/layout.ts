/**
 * Pixel layout shared by the state timeline and the GPU memory chart. Both draw time over the
 * same horizontal extent: [gutter.left, width - gutter.right] of their own box, so with equal
 * widths and gutters a time sits at the same x in both.
 */
import type { TimelineSegment } from "./segments";
import { stateStyle, type StateStyle } from "./stateStyle";

export interface TimeGutter {
  /** px before the time area (the chart's y-axis lives here) */
  left: number;
  /** px after it */
  right: number;
}

/** Default gutter for both components. Left fits a y-axis with values up to "1152". */
export const TIME_GUTTER: Readonly<TimeGutter> = { left: 44, right: 12 };

export interface TimeScale {
  fromMs: number;
  toMs: number;
  left: number;
  width: number;
  x(ms: number): number;
  ms(x: number): number;
}

export function timeScale(fromMs: number, toMs: number, boxWidth: number, gutter: TimeGutter = TIME_GUTTER): TimeScale {
  const left = gutter.left;
  const width = Math.max(1, boxWidth - gutter.left - gutter.right);
  const span = Math.max(1, toMs - fromMs);
  return {
    fromMs,
    toMs,
    left,
    width,
    x: (ms) => left + ((ms - fromMs) / span) * width,
    ms: (x) => fromMs + ((x - left) / width) * span,
  };
}

/** Rough text width for the label-fitting decision (system sans at 11 px ≈ 6.2 px per char). */
export const CHAR_PX = 6.4;
const LABEL_PAD_PX = 10;
/** Zero-length and sub-pixel states still get a sliver you can hover and tab to. */
export const MIN_SEGMENT_PX = 2;

export interface SegmentBox {
  kind: "segment";
  segment: TimelineSegment;
  style: StateStyle;
  x: number;
  width: number;
  /** label that fits inside, or null */
  label: string | null;
}

/**
 * Several consecutive states each too narrow to see (a restart loop at 24 h): one box, drawn
 * in the style of the state that lasted longest in it, with its own tooltip listing them.
 */
export interface ClusterBox {
  kind: "cluster";
  segments: TimelineSegment[];
  style: StateStyle;
  x: number;
  width: number;
  label: string | null;
  startMs: number;
  endMs: number;
}

export type LaneBox = SegmentBox | ClusterBox;

/** Below this width a state is merged with narrow neighbours. */
export const CLUSTER_BELOW_PX = 3;

function fitLabel(width: number, ...candidates: string[]): string | null {
  for (const c of candidates) if (c.length * CHAR_PX + LABEL_PAD_PX <= width) return c;
  return null;
}

/** Per state label in a cluster: how often and how long, longest first. */
export function clusterBreakdown(segments: readonly TimelineSegment[]): { style: StateStyle; count: number; ms: number }[] {
  const by = new Map<string, { style: StateStyle; count: number; ms: number }>();
  for (const s of segments) {
    const style = stateStyle(s.activeState, s.subState);
    const e = by.get(style.label) ?? { style, count: 0, ms: 0 };
    e.count++;
    e.ms += s.endMs - s.startMs;
    by.set(style.label, e);
  }
  return [...by.values()].sort((a, b) => b.ms - a.ms || b.count - a.count);
}

export function layoutSegments(segments: readonly TimelineSegment[], scale: TimeScale): LaneBox[] {
  const right = scale.left + scale.width;
  const place = (x0: number, x1: number) => {
    const width = Math.max(MIN_SEGMENT_PX, x1 - x0);
    return { x: Math.min(x0, right - width), width };
  };
  const out: LaneBox[] = [];
  let run: TimelineSegment[] = [];
  const flushRun = () => {
    if (run.length === 0) return;
    if (run.length === 1) {
      const segment = run[0]!;
      const style = stateStyle(segment.activeState, segment.subState);
      out.push({ kind: "segment", segment, style, ...place(scale.x(segment.startMs), scale.x(segment.endMs)), label: null });
    } else {
      const startMs = run[0]!.startMs;
      const endMs = run[run.length - 1]!.endMs;
      const { x, width } = place(scale.x(startMs), scale.x(endMs));
      const style = clusterBreakdown(run)[0]!.style;
      out.push({ kind: "cluster", segments: run, style, x, width, startMs, endMs, label: fitLabel(width, `${run.length} changes`, `${run.length}`) });
    }
    run = [];
  };
  for (const segment of segments) {
    const x0 = scale.x(segment.startMs);
    const x1 = scale.x(segment.endMs);
    if (x1 - x0 < CLUSTER_BELOW_PX) {
      run.push(segment);
      continue;
    }
    flushRun();
    const style = stateStyle(segment.activeState, segment.subState);
    const { x, width } = place(x0, x1);
    out.push({ kind: "segment", segment, style, x, width, label: fitLabel(width, style.label, style.shortLabel) });
  }
  flushRun();
  return out;
}

/** A span no agent watched (ObservationGap), placed on the time axis. */
export interface GapBox {
  /** the whole span, as reported (may reach outside the window) */
  fromMs: number;
  toMs: number;
  /** the part inside the window */
  startMs: number;
  endMs: number;
  /** the span began before the window / ends after it */
  clippedStart: boolean;
  clippedEnd: boolean;
  x: number;
  width: number;
}

/**
 * Spans in which no agent watched the host, clipped to the scale's window and placed with the
 * same x as the segments (and the GPU chart, which shares the scale). Spans outside the window
 * and empty or malformed ones are dropped; overlapping ones are merged, so a span is drawn once.
 * Sorted oldest first. A span narrower than MIN_SEGMENT_PX still gets a sliver.
 */
export function layoutGaps(gaps: readonly { fromMs: number; toMs: number }[], scale: TimeScale): GapBox[] {
  const valid = gaps
    .filter((g) => Number.isFinite(g.fromMs) && Number.isFinite(g.toMs) && g.toMs > g.fromMs)
    .map((g) => ({ fromMs: g.fromMs, toMs: g.toMs }))
    .sort((a, b) => a.fromMs - b.fromMs);
  const merged: { fromMs: number; toMs: number }[] = [];
  for (const g of valid) {
    const last = merged.at(-1);
    if (last && g.fromMs <= last.toMs) last.toMs = Math.max(last.toMs, g.toMs);
    else merged.push(g);
  }
  const right = scale.left + scale.width;
  const out: GapBox[] = [];
  for (const g of merged) {
    if (g.toMs <= scale.fromMs || g.fromMs >= scale.toMs) continue;
    const startMs = Math.max(g.fromMs, scale.fromMs);
    const endMs = Math.min(g.toMs, scale.toMs);
    const x0 = scale.x(startMs);
    const width = Math.max(MIN_SEGMENT_PX, scale.x(endMs) - x0);
    out.push({
      fromMs: g.fromMs,
      toMs: g.toMs,
      startMs,
      endMs,
      clippedStart: g.fromMs < scale.fromMs,
      clippedEnd: g.toMs > scale.toMs,
      x: Math.min(x0, right - width),
      width,
    });
  }
  return out;
}
