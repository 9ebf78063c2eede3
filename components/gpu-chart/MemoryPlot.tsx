"use client";
/**
 * The GPU memory chart's plot, drawn as SVG (memPlot.ts's geometry): the stacked bands per
 * memory class, the memory held by exited processes hatched, the GPUs' total as a dashed
 * ceiling, GiB ticks in the gutter and time ticks under the plot. Colours are the theme's CSS
 * variables, so it follows the system theme without redrawing.
 */
import { useMemo } from "react";
import type { TimeGutter } from "@/components/timeline/layout";
import { memPlot } from "./memPlot";
import { MEMORY_CLASSES, type MemoryClass, type StackedMemory } from "./stack";

export const CLASS_VAR: Record<MemoryClass, string> = {
  this: "--gd-mem-this",
  exited: "--gd-mem-exited",
  other: "--gd-mem-other",
  outside: "--gd-mem-outside",
};

const EXITED = MEMORY_CLASSES.indexOf("exited");
const NO_ROWS: StackedMemory = { xs: [], raw: [], cumulative: [], total: [], used: [], gpuUuids: [], fellBackToAllGpus: false, sourcePoints: 0 };
const FONT = { font: "11px system-ui, sans-serif" };

export function MemoryPlot(props: {
  stack: StackedMemory | null;
  extent: { fromMs: number; toMs: number } | null;
  ticks: readonly { atMs: number; label: string }[];
  width: number;
  height: number;
  gutter: TimeGutter;
  /** the pointer's x while it is over the plot: a dashed hairline */
  pointerX: number | null;
  /** unique per chart (the hatch pattern's and clip's ids) */
  id: string;
}) {
  const { stack, extent, ticks, width, height, gutter, pointerX, id } = props;
  const g = useMemo(() => {
    const s = stack ?? NO_ROWS;
    return memPlot({
      xs: s.xs,
      cumulative: s.cumulative,
      total: s.total,
      fromMs: extent?.fromMs ?? 0,
      toMs: extent?.toMs ?? 1,
      width,
      height,
      gutter,
      ticks: extent ? ticks : [],
      edged: [EXITED],
    });
  }, [stack, extent, ticks, width, height, gutter]);
  const { plot } = g;
  const hatch = `${id}-hatch`;
  const clip = `${id}-clip`;
  return (
    <svg width={width} height={height} className="block" aria-hidden="true" data-testid="gpu-memory-plot">
      <defs>
        <pattern id={hatch} patternUnits="userSpaceOnUse" width={8} height={8}>
          <rect width={8} height={8} style={{ fill: `var(${CLASS_VAR.exited})` }} />
          {/* one diagonal plus its wrapped corners, so tiles join seamlessly */}
          <path d="M-4 4L4 -4M0 8L8 0M4 12L12 4" style={{ stroke: "var(--gd-mem-exited-ink)" }} strokeWidth={2} />
        </pattern>
        <clipPath id={clip}>
          <rect x={plot.left} y={plot.top} width={plot.right - plot.left} height={plot.bottom - plot.top} />
        </clipPath>
      </defs>
      <g style={{ stroke: "var(--gd-grid)" }} strokeWidth={1}>
        {g.yTicks.map((t) => (
          <line key={t.label} x1={plot.left} x2={plot.right} y1={t.y} y2={t.y} />
        ))}
        {g.xTicks.map((t) => (
          <line key={t.x} x1={t.x} x2={t.x} y1={plot.top} y2={plot.bottom} />
        ))}
      </g>
      <g clipPath={`url(#${clip})`}>
        {MEMORY_CLASSES.map((c, k) =>
          g.bands[k] ? <path key={c} data-class={c} d={g.bands[k]} style={{ fill: c === "exited" ? `url(#${hatch})` : `var(${CLASS_VAR[c]})` }} /> : null,
        )}
        {g.edges[0] && <path d={g.edges[0]} fill="none" style={{ stroke: `var(${CLASS_VAR.exited})` }} strokeWidth={1} />}
        {g.total && <path d={g.total} fill="none" style={{ stroke: "var(--gd-mem-total)" }} strokeWidth={1.5} strokeDasharray="6 4" />}
      </g>
      <g style={{ ...FONT, fill: "var(--gd-axis)" }}>
        {g.yTicks.map((t) => (
          <text key={t.label} x={plot.left - 4} y={Math.max(t.y, 6)} textAnchor="end" dominantBaseline="middle">
            {t.label}
          </text>
        ))}
        {g.xTicks.map((t) => (
          <text key={t.x} x={t.x} y={plot.bottom + 4} textAnchor="middle" dominantBaseline="hanging">
            {t.label}
          </text>
        ))}
      </g>
      {pointerX != null && (
        <line x1={pointerX} x2={pointerX} y1={plot.top} y2={plot.bottom} style={{ stroke: "var(--gd-axis)" }} strokeWidth={1} strokeDasharray="5 3" />
      )}
    </svg>
  );
}
