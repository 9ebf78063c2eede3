/**
 * The geometry of the GPU memory chart: one SVG band per memory class (between the running sum
 * below it and its own), the GPUs' total as the ceiling line, the y axis's GiB ticks and the
 * time ticks, all on the StateTimeline's time scale (timeScale: the plot starts exactly at
 * gutter.left). Pure, so it is tested without a browser; GpuMemoryChart draws it. A row with
 * no values (null: no samples there) breaks every band and line: a gap, never an area drawn
 * through it.
 */
import type { TimeGutter } from "@/components/timeline/layout";
import { formatGiBNumber } from "@/server/contract/format";

/** The plot's top padding and the x axis's height below it (the gap shading uses the same). */
export const PLOT_TOP = 8;
export const X_AXIS = 24;
/** Least room between two labelled y grid lines, px. */
const Y_SPACE_PX = 30;
/** y-axis steps in MiB that read as round GiB numbers. */
export const Y_INCRS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000].map((g) => g * 1024);

export interface MemPlotInput {
  /** x in seconds, increasing */
  xs: readonly number[];
  /** per class, bottom of the stack first: the running sum, MiB; null = no value */
  cumulative: readonly (readonly (number | null)[])[];
  /** the ceiling, MiB */
  total: readonly (number | null)[];
  fromMs: number;
  toMs: number;
  /** the box's width and height, px (axes included) */
  width: number;
  height: number;
  gutter: TimeGutter;
  /** time ticks (timeTicks), drawn as grid lines with their labels under the plot */
  ticks?: readonly { atMs: number; label: string }[];
  /** class indexes whose band's top edge is stroked where the band has height (exited memory) */
  edged?: readonly number[];
}

export interface MemPlot {
  plot: { left: number; right: number; top: number; bottom: number };
  /** one closed path per class, same order as `cumulative` ("" when nothing of it is drawn) */
  bands: string[];
  /** per class in `edged`: the top edge where the band is not empty, else "" */
  edges: string[];
  /** the ceiling line */
  total: string;
  yTicks: { y: number; label: string }[];
  xTicks: { x: number; label: string }[];
  /** the top of the y scale, MiB */
  yMax: number;
}

const r1 = (n: number) => Math.round(n * 10) / 10;

/** Index of the x nearest to `s` (seconds), or null when there are none. */
export function nearestIndex(xs: readonly number[], s: number): number | null {
  if (xs.length === 0) return null;
  let lo = 0;
  let hi = xs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < s) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 && s - xs[lo - 1]! <= xs[lo]! - s ? lo - 1 : lo;
}

/** The smallest round GiB step that leaves Y_SPACE_PX between grid lines. */
export function yStep(yMax: number, plotHeight: number): number {
  const perMiB = plotHeight / (yMax > 0 ? yMax : 1);
  return Y_INCRS.find((inc) => inc * perMiB >= Y_SPACE_PX) ?? Y_INCRS.at(-1)!;
}

export function memPlot(input: MemPlotInput): MemPlot {
  const { xs, cumulative, total, fromMs, toMs, width, height, gutter, ticks = [], edged = [] } = input;
  const plotW = Math.max(1, width - gutter.left - gutter.right);
  const plot = { left: gutter.left, right: gutter.left + plotW, top: PLOT_TOP, bottom: Math.max(PLOT_TOP + 1, height - X_AXIS) };
  const span = Math.max(1, toMs - fromMs);
  const x = (s: number) => plot.left + ((s * 1000 - fromMs) / span) * plotW;

  let max = 0;
  for (const col of [...cumulative, total]) for (const v of col) if (v != null && v > max) max = v;
  const yMax = max > 0 ? max * 1.06 : 1024;
  const y = (v: number) => plot.bottom - (v / yMax) * (plot.bottom - plot.top);

  const runs = (col: readonly (number | null)[]): [number, number][] => {
    const out: [number, number][] = [];
    let start = -1;
    for (let i = 0; i <= xs.length; i++) {
      const known = i < xs.length && col[i] != null;
      if (known && start < 0) start = i;
      if (!known && start >= 0) {
        out.push([start, i - 1]);
        start = -1;
      }
    }
    return out;
  };
  const pt = (i: number, v: number) => `${r1(x(xs[i]!))} ${r1(y(v))}`;
  const lower = (k: number, i: number) => (k === 0 ? 0 : (cumulative[k - 1]![i] ?? 0));

  const bands = cumulative.map((col, k) => {
    let d = "";
    for (const [a, b] of runs(col)) {
      let hasHeight = false;
      for (let i = a; i <= b; i++) if (col[i]! > lower(k, i)) hasHeight = true;
      if (!hasHeight) continue;
      d += `M${pt(a, col[a]!)}`;
      for (let i = a + 1; i <= b; i++) d += `L${pt(i, col[i]!)}`;
      for (let i = b; i >= a; i--) d += `L${pt(i, lower(k, i))}`;
      d += "Z";
    }
    return d;
  });

  const edges = edged.map((k) => {
    const col = cumulative[k]!;
    const tall = (i: number) => col[i]! > lower(k, i);
    let d = "";
    for (const [a, b] of runs(col)) {
      let pen = false;
      for (let i = a; i <= b; i++) {
        // a point is drawn when the band has height there or at a neighbour in the run
        const on = tall(i) || (i > a && tall(i - 1)) || (i < b && tall(i + 1));
        if (!on) {
          pen = false;
          continue;
        }
        d += `${pen ? "L" : "M"}${pt(i, col[i]!)}`;
        pen = true;
      }
    }
    return d;
  });

  let totalD = "";
  for (const [a, b] of runs(total)) for (let i = a; i <= b; i++) totalD += `${i === a ? "M" : "L"}${pt(i, total[i]!)}`;

  const step = yStep(yMax, plot.bottom - plot.top);
  const yTicks: { y: number; label: string }[] = [];
  for (let v = 0; v <= yMax; v += step) yTicks.push({ y: r1(y(v)), label: v === 0 ? "0" : formatGiBNumber(v) });

  const xTicks = ticks.filter((t) => t.atMs >= fromMs && t.atMs <= toMs).map((t) => ({ x: r1(x(t.atMs / 1000)), label: t.label }));

  return { plot, bands, edges, total: totalD, yTicks, xTicks, yMax };
}
