/**
 * The geometry of one small lane (telemetry, engine latency): SVG paths for its series on the
 * shared time axis, a y scale from 0 (or the lane's fixed range) to a little over its highest
 * value, two labelled grid lines, and the spans where clocks were held down. Pure, so it is
 * tested without a browser; LanePlot draws it. A value not reported (null) breaks the line:
 * a gap, never a line drawn through it.
 */
import type { TimeGutter } from "@/components/timeline/layout";

export interface LaneGeometryInput {
  /** x in seconds, increasing */
  xs: readonly number[];
  series: readonly (readonly (number | null)[])[];
  /** 1 where clocks were held down (a step: it holds until the next x) */
  throttled?: readonly (0 | 1 | null)[] | null;
  width: number;
  height: number;
  gutter: TimeGutter;
  /** the time span drawn, ms; default: the data's span */
  win?: { fromMs: number; toMs: number } | null;
  /** a fixed y range (utilisation: 0–100) */
  range?: readonly [number, number];
}

export interface LaneGeometry {
  /** one SVG path per series ("" when nothing of it is in view) */
  paths: string[];
  /** horizontal grid lines with their labels */
  ticks: { y: number; label: string }[];
  /** spans where clocks were held down: x and width in px */
  held: { x: number; w: number }[];
  plot: { left: number; right: number; top: number; bottom: number };
}

const PAD_TOP = 4;

/** `v` rounded down to two significant digits (22, 950, 110, 1900): the labelled line near the top. */
export function roundDown(v: number): number {
  if (!(v > 0)) return 0;
  const p = 10 ** (Math.floor(Math.log10(v)) - 1);
  return Number((Math.floor(v / p + 1e-9) * p).toPrecision(2));
}

function label(v: number): string {
  if (v === 0) return "0";
  if (Math.abs(v) >= 10_000) return `${Math.round(v / 1000)}k`;
  if (Math.abs(v) >= 1000) return `${(v / 1000).toFixed(1).replace(/\.0$/, "")}k`;
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}

export function laneGeometry(input: LaneGeometryInput): LaneGeometry {
  const { xs, series, throttled, width, height, gutter, win, range } = input;
  const plot = { left: gutter.left, right: Math.max(gutter.left + 1, width - gutter.right), top: PAD_TOP, bottom: height };
  const lo = win ? win.fromMs / 1000 : (xs[0] ?? 0);
  const hi = win ? win.toMs / 1000 : (xs.at(-1) ?? 1);
  const span = hi > lo ? hi - lo : 1;
  const x = (s: number) => plot.left + ((s - lo) / span) * (plot.right - plot.left);

  // the points in view, with one either side so a line reaches the edge
  let first = 0;
  while (first < xs.length - 1 && xs[first + 1]! < lo) first++;
  let last = xs.length - 1;
  while (last > 0 && xs[last - 1]! > hi) last--;

  let yMin: number;
  let yMax: number;
  if (range) [yMin, yMax] = range;
  else {
    let min = 0;
    let max = -Infinity;
    for (const vs of series)
      for (let i = first; i <= last; i++) {
        const v = vs[i];
        if (v == null) continue;
        if (v < min) min = v;
        if (v > max) max = v;
      }
    yMin = min;
    yMax = max > 0 ? max * 1.1 : 1;
  }
  const ySpan = yMax > yMin ? yMax - yMin : 1;
  const y = (v: number) => plot.bottom - ((v - yMin) / ySpan) * (plot.bottom - plot.top);
  const r1 = (n: number) => Math.round(n * 10) / 10;

  const paths = series.map((vs) => {
    let d = "";
    let pen = false;
    for (let i = first; i <= last; i++) {
      const v = vs[i];
      if (v == null) {
        pen = false;
        continue;
      }
      d += `${pen ? "L" : "M"}${r1(x(xs[i]!))} ${r1(y(v))}`;
      pen = true;
    }
    return d;
  });

  const top = range ? yMax : roundDown(yMax / 1.1 > 0 ? yMax / 1.1 : yMax);
  const ticks = [{ y: r1(y(yMin)), label: label(yMin) }];
  if (top > yMin) ticks.push({ y: r1(y(top)), label: label(top) });

  const held: { x: number; w: number }[] = [];
  if (throttled)
    for (let i = first; i <= last; i++) {
      if (throttled[i] !== 1) continue;
      const from = Math.max(plot.left, x(xs[i]!));
      const to = Math.min(plot.right, i + 1 < xs.length ? x(xs[i + 1]!) : plot.right);
      if (to <= from) continue;
      const prev = held.at(-1);
      if (prev && Math.abs(prev.x + prev.w - from) < 0.5) prev.w = r1(to - prev.x);
      else held.push({ x: r1(from), w: r1(to - from) });
    }

  return { paths, ticks, held, plot };
}
