"use client";
/**
 * GPU memory over time for one unit's page, stacked by who holds it: this unit, memory still
 * held by processes that exited (hatched), other units, everything else; the GPUs' total
 * memory is the ceiling line.
 *
 * Shares the time axis with the StateTimeline above it: pass the timeline's window and the same
 * gutter, and a time sits at the same x in both (the y-axis occupies exactly gutter.left).
 * Drawn as SVG (MemoryPlot, geometry in memPlot.ts), like the lanes below it and the timeline:
 * no chart library comes with the unit page (bench/route-js.ts).
 *
 * Spans in which no agent ran (`unobserved`) have no samples: they are shaded with the same
 * grey hatch as in the timeline and labelled, so a flat or missing stretch is not read as data.
 */
import { useElementWidth } from "@/components/useElementWidth";
import { useId, useMemo, useState, type PointerEvent } from "react";
import type { GpuSample, ObservationGap } from "@/server/contract/types";
import { formatDuration, formatMiB, formatTime } from "@/server/contract/format";
import { CHAR_PX, TIME_GUTTER, layoutGaps, timeScale, type TimeGutter } from "@/components/timeline/layout";
import { timeTicks } from "@/components/timeline/ticks";
import { MEMORY_CLASSES, MEMORY_CLASS_LABEL, StackCache, gpuList, stackMemory, type MemoryClass, type StackMode } from "./stack";
import { PLOT_TOP, X_AXIS, nearestIndex } from "./memPlot";
import { CLASS_VAR, MemoryPlot } from "./MemoryPlot";

export type { StackMode } from "./stack";

export interface GpuMemoryChartProps {
  samples: readonly GpuSample[];
  /** the unit of the page, e.g. "vllm-kimi-k25.service" */
  unit: string;
  mode: StackMode;
  onModeChange: (mode: StackMode) => void;
  /** per-gpu: the GPU shown (uuid); default: the first GPU the unit holds, else GPU 0 */
  selectedGpuUuid?: string | null;
  onSelectedGpuChange?: (uuid: string) => void;
  /** sum: which GPUs to add up; default: those the unit held memory on in the window */
  gpuUuids?: readonly string[] | null;
  /** the time span to draw, shared with the StateTimeline (onWindowChange) */
  window: { fromMs: number; toMs: number } | null;
  /** plot height in px (axes included); default 220 */
  height?: number;
  /** must equal the StateTimeline's for the time axes to line up */
  gutter?: TimeGutter;
  /** spans in which no agent ran (no samples there): shaded and labelled */
  unobserved?: readonly ObservationGap[];
  /** a time hovered in the timeline: drawn as a hairline */
  hoverMs?: number | null;
  onHoverMs?: (ms: number | null) => void;
  timeZone?: string;
  /** width before the first measurement (server render, tests) */
  initialWidth?: number;
  className?: string;
}

const NO_GAPS: readonly ObservationGap[] = [];
/** The shading's text: what is (not) there and why. */
export const GAP_CHART_LABEL = "no samples: agent not running";
/** The shading's text if the span is wide enough for it (the legend says it in full anyway). */
function fitGapChartText(width: number): string | null {
  for (const t of [GAP_CHART_LABEL, "no samples"]) if (t.length * CHAR_PX + 12 <= width) return t;
  return null;
}

const btn =
  "inline-flex h-9 items-center justify-center rounded-md border px-2 text-sm font-medium " +
  "border-[var(--gd-border)] bg-[var(--gd-surface)] text-[var(--gd-surface-fg)] " +
  "aria-pressed:bg-[var(--gd-surface-fg)] aria-pressed:text-[var(--gd-surface)] " +
  "focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-[var(--gd-focus)]";

export function GpuMemoryChart(props: GpuMemoryChartProps) {
  const {
    samples,
    unit,
    mode,
    onModeChange,
    selectedGpuUuid,
    onSelectedGpuChange,
    gpuUuids,
    window: win,
    height = 220,
    gutter = TIME_GUTTER,
    unobserved = NO_GAPS,
    hoverMs = null,
    onHoverMs,
    timeZone,
    initialWidth,
    className,
  } = props;
  const rawId = useId();
  const id = `gdmc${rawId.replace(/[^a-zA-Z0-9_-]/g, "")}`;

  const [boxRef, width] = useElementWidth(initialWidth);

  const gpus = useMemo(() => gpuList(samples), [samples]);
  // Per-sample results survive re-renders (state, not a ref: it is read while rendering).
  const [cache] = useState(() => new StackCache());
  const extent = useMemo(() => {
    if (win) return win;
    // No shared window yet: the span the samples cover.
    let lo = Infinity;
    let hi = -Infinity;
    for (const s of samples) {
      if (s.atMs < lo) lo = s.atMs;
      if (s.atMs > hi) hi = s.atMs;
    }
    return Number.isFinite(lo) && hi > lo ? { fromMs: lo, toMs: hi } : null;
  }, [win, samples]);
  const scale = extent ? timeScale(extent.fromMs, extent.toMs, width || 800, gutter) : null;
  const effectiveGpu = mode === "per-gpu" ? (selectedGpuUuid ?? null) : null;
  // the timeline's geometry on the same scale, so the shading sits under its veil to the pixel
  const gapBoxes = scale ? layoutGaps(unobserved, scale) : [];

  const stack = useMemo(() => {
    if (!extent) return null;
    return stackMemory(
      samples,
      {
        unit,
        mode,
        gpuUuid: effectiveGpu,
        gpuUuids: gpuUuids ?? null,
        fromMs: extent.fromMs,
        toMs: extent.toMs,
        pixels: scale ? Math.round(scale.width) : 0,
      },
      cache,
    );
  }, [samples, unit, mode, effectiveGpu, gpuUuids, extent, scale?.width, cache]); // eslint-disable-line react-hooks/exhaustive-deps

  // Default GPU for per-GPU mode: the first one the unit holds.
  const shownGpu = mode === "per-gpu" ? (stack?.gpuUuids[0] ?? effectiveGpu) : null;

  // The pointer over the plot (x in px, its time): the sample nearest it is read out.
  const [pointer, setPointer] = useState<{ x: number; ms: number } | null>(null);
  const chartHovered = pointer != null;
  const hoverIdx = useMemo(() => (pointer && stack ? nearestIndex(stack.xs, pointer.ms / 1000) : null), [pointer, stack]);

  // The same ticks as the timeline above, so both axes show the same instants.
  const ticks = useMemo(
    () => (extent && scale ? timeTicks(extent.fromMs, extent.toMs, scale.width, { timeZone, labelRoomPx: { left: gutter.left, right: gutter.right } }) : []),
    [extent, scale?.width, timeZone, gutter.left, gutter.right], // eslint-disable-line react-hooks/exhaustive-deps
  );

  // Its time goes to the timeline above (onHoverMs), as the timeline's comes here (hoverMs).
  const leave = () => {
    if (pointer == null) return;
    setPointer(null);
    onHoverMs?.(null);
  };
  const onPointerMove = (e: PointerEvent<HTMLDivElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    const x = e.clientX - r.left;
    const y = e.clientY - r.top;
    if (!scale || x < scale.left || x > scale.left + scale.width || y < PLOT_TOP || y > height - X_AXIS) return leave();
    const ms = scale.ms(x);
    setPointer({ x, ms });
    onHoverMs?.(ms);
  };

  // --- readout -------------------------------------------------------------------------
  const readIdx = useMemo(() => {
    if (!stack) return null;
    if (hoverIdx != null && hoverIdx < stack.xs.length && stack.raw[0]![hoverIdx] != null) return hoverIdx;
    for (let i = stack.xs.length - 1; i >= 0; i--) if (stack.raw[0]![i] != null) return i;
    return null;
  }, [stack, hoverIdx]);

  const peakExited = useMemo(() => {
    if (!stack) return null;
    const ex = stack.raw[MEMORY_CLASSES.indexOf("exited")]!;
    let best = -1;
    for (let i = 0; i < ex.length; i++) if ((ex[i] ?? 0) > 0 && (best < 0 || ex[i]! > ex[best]!)) best = i;
    return best < 0 ? null : { atMs: stack.xs[best]! * 1000, miB: ex[best]! };
  }, [stack]);

  const gpuLabel = (uuid: string) => {
    const g = gpus.find((x) => x.uuid === uuid);
    return g ? `GPU ${g.index ?? "?"}` : uuid;
  };
  const scopeText = !stack
    ? ""
    : mode === "per-gpu"
      ? shownGpu
        ? gpuLabel(shownGpu)
        : "no GPU"
      : stack.fellBackToAllGpus
        ? `all ${stack.gpuUuids.length} GPUs (${unit} holds none in this window)`
        : `${unit}'s GPUs: ${stack.gpuUuids.map(gpuLabel).join(", ")}`;

  const at = readIdx != null && stack ? stack.xs[readIdx]! * 1000 : null;
  const value = (c: MemoryClass) => (readIdx != null && stack ? (stack.raw[MEMORY_CLASSES.indexOf(c)]![readIdx] ?? null) : null);
  const totalNow = readIdx != null && stack ? (stack.total[readIdx] ?? null) : null;
  const measured = width > 0;
  const summary = !measured
    ? "GPU memory chart"
    : stack && at != null
      ? `GPU memory, ${scopeText}, at ${formatTime(at, { timeZone })}: ` +
        MEMORY_CLASSES.map((c) => `${MEMORY_CLASS_LABEL[c]} ${formatMiB(value(c))}`).join(", ") +
        `; total ${totalNow == null ? "not reported" : formatMiB(totalNow)}.` +
        (peakExited ? ` Peak memory held by exited processes in view: ${formatMiB(peakExited.miB)} at ${formatTime(peakExited.atMs, { timeZone })}.` : "")
      : "No GPU memory samples in this time range.";
  const gapText =
    measured && gapBoxes.length > 0
      ? ` No samples while no agent was running: ${gapBoxes
          .map((g) => `${formatTime(g.fromMs, { timeZone })} – ${formatTime(g.toMs, { timeZone })} (${formatDuration(g.toMs - g.fromMs)})`)
          .join(", ")}.`
      : "";

  const hoverX = !chartHovered && hoverMs != null && scale && extent && hoverMs >= extent.fromMs && hoverMs <= extent.toMs ? scale.x(hoverMs) : null;
  const empty = !stack || stack.sourcePoints === 0;

  return (
    <section className={`flex flex-col gap-2 ${className ?? ""}`} aria-labelledby={`${id}-title`}>
      <div className="flex flex-wrap items-center gap-2">
        <h3 id={`${id}-title`} className="mr-auto text-sm font-semibold">
          GPU memory (GiB) <span className="font-normal text-[var(--gd-surface-muted)]">· {scopeText}</span>
        </h3>
        <div role="group" aria-label="GPU memory view" className="flex gap-1">
          <button type="button" className={btn} aria-pressed={mode === "sum"} onClick={() => onModeChange("sum")}>
            Sum
          </button>
          <button type="button" className={btn} aria-pressed={mode === "per-gpu"} onClick={() => onModeChange("per-gpu")}>
            Per GPU
          </button>
        </div>
        {mode === "per-gpu" && gpus.length > 0 && (
          <label className="flex items-center gap-1 text-sm">
            <span className="sr-only">GPU</span>
            <select
              className="h-9 rounded-md border border-[var(--gd-border)] bg-[var(--gd-surface)] px-2 text-[var(--gd-surface-fg)]"
              value={shownGpu ?? ""}
              onChange={(e) => onSelectedGpuChange?.(e.target.value)}
            >
              {gpus.map((g) => (
                <option key={g.uuid} value={g.uuid}>
                  {`GPU ${g.index ?? "?"} · ${g.name}`}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>

      <div ref={boxRef} className="relative w-full" style={{ height }}>
        <div role="img" aria-label={summary + gapText} className="absolute inset-0" onPointerMove={onPointerMove} onPointerLeave={leave}>
          {measured && (
            <MemoryPlot stack={stack} extent={extent} ticks={ticks} width={width} height={height} gutter={gutter} pointerX={pointer?.x ?? null} id={id} />
          )}
        </div>
        {empty && (
          <p className="absolute inset-0 flex items-center justify-center text-sm text-[var(--gd-surface-muted)]" style={{ paddingLeft: gutter.left }}>
            No GPU memory samples in this time range.
          </p>
        )}
        {measured &&
          gapBoxes.map((g) => (
            <div
              key={g.fromMs}
              aria-hidden="true"
              data-testid="gpu-gap"
              className="gd-gap pointer-events-none absolute flex items-start justify-center overflow-hidden"
              style={{
                left: g.x,
                width: g.width,
                top: PLOT_TOP,
                bottom: X_AXIS,
                borderLeft: g.clippedStart ? undefined : "1px dashed var(--gd-gap-edge)",
                borderRight: g.clippedEnd ? undefined : "1px dashed var(--gd-gap-edge)",
              }}
            >
              {fitGapChartText(g.width) && (
                <span className="mt-1 rounded border border-[var(--gd-gap-edge)] bg-[var(--gd-surface)] px-1 text-[10px] font-semibold whitespace-nowrap text-[var(--gd-surface-fg)]">
                  {fitGapChartText(g.width)}
                </span>
              )}
            </div>
          ))}
        {hoverX != null && (
          <div
            aria-hidden="true"
            className="pointer-events-none absolute top-2 w-px"
            style={{ left: hoverX, bottom: 24, background: "var(--gd-hover)", opacity: 0.6 }}
          />
        )}
      </div>

      <dl className="flex flex-wrap gap-x-4 gap-y-1 text-xs" aria-label="Legend and values">
        {measured && at != null && (
          <div className="flex items-center gap-1.5 font-medium">
            <dt className="sr-only">Time</dt>
            <dd>{formatTime(at, { timeZone, date: "auto", relativeToMs: extent?.toMs })}</dd>
          </div>
        )}
        {MEMORY_CLASSES.map((c) => (
          <div key={c} className="flex items-center gap-1.5">
            <span
              aria-hidden="true"
              className={`inline-block h-3 w-5 shrink-0 rounded-sm ${c === "exited" ? "gd-mem-exited" : ""}`}
              style={c === "exited" ? undefined : { background: `var(${CLASS_VAR[c]})` }}
            />
            <dt>{c === "this" ? `this unit (${unit})` : MEMORY_CLASS_LABEL[c]}</dt>
            <dd className="font-mono tabular-nums">{formatMiB(value(c))}</dd>
          </div>
        ))}
        <div className="flex items-center gap-1.5">
          <span aria-hidden="true" className="inline-block w-5 shrink-0 border-t-2 border-dashed" style={{ borderColor: "var(--gd-mem-total)" }} />
          <dt>total</dt>
          <dd className="font-mono tabular-nums">{totalNow == null ? (at == null ? "n/a" : "not reported") : formatMiB(totalNow)}</dd>
        </div>
        {measured && gapBoxes.length > 0 && (
          <div className="flex items-center gap-1.5" data-testid="gpu-legend-gap">
            <span aria-hidden="true" className="gd-gap inline-block h-3 w-5 shrink-0 rounded-sm border border-dashed border-[var(--gd-gap-edge)]" />
            <dt>{GAP_CHART_LABEL}</dt>
            <dd className="sr-only">{`${gapBoxes.length} ${gapBoxes.length === 1 ? "span" : "spans"} in view`}</dd>
          </div>
        )}
      </dl>
    </section>
  );
}

export default GpuMemoryChart;
