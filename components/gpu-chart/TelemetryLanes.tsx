"use client";
/**
 * Small lanes under the GPU memory chart, on its time axis (same window, same gutter):
 * utilisation (GPU, memory controller), power (draw, limit), temperature and SM clock (now,
 * max) with the spans where clocks were held down shaded — the throttle reasons the GPU cards
 * name, in time. Not reported is a gap, never 0; a lane with nothing reported says so.
 * uPlot is loaded in the browser only.
 */
import { useEffect, useMemo, useRef, useState } from "react";
import type uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { TIME_GUTTER, type TimeGutter } from "@/components/timeline/layout";
import { useElementWidth } from "@/components/useElementWidth";
import type { GpuSample } from "@/server/contract/types";
import { telemetryLanes, type TelemetryLanes as Lanes } from "./lanes";

/** Columns a lane draws: x in seconds, then the series' values. */
export interface LaneData {
  xs: number[];
  throttled?: (0 | 1 | null)[];
}

export interface LaneSeries<T extends LaneData> {
  label: string;
  stroke: string;
  dash?: number[];
  values: (l: T) => (number | null)[];
}

export interface LaneSpec<T extends LaneData> {
  key: string;
  title: string;
  unit: string;
  range?: [number, number];
  series: LaneSeries<T>[];
  /** shade where clocks were held down (`throttled`) */
  throttle?: boolean;
}

const LANES: LaneSpec<Lanes>[] = [
  {
    key: "util",
    title: "utilisation",
    unit: "%",
    range: [0, 100],
    series: [
      { label: "GPU", stroke: "#2563eb", values: (l) => l.util },
      { label: "memory", stroke: "#7c3aed", dash: [4, 3], values: (l) => l.memUtil },
    ],
  },
  {
    key: "power",
    title: "power",
    unit: "W",
    series: [
      { label: "draw", stroke: "#16a34a", values: (l) => l.power },
      { label: "limit", stroke: "#71717a", dash: [6, 4], values: (l) => l.powerLimit },
    ],
  },
  { key: "temp", title: "temperature", unit: "°C", series: [{ label: "GPU", stroke: "#ea580c", values: (l) => l.temp }] },
  {
    key: "sm",
    title: "SM clock",
    unit: "MHz",
    throttle: true,
    series: [
      { label: "now", stroke: "#0891b2", values: (l) => l.sm },
      { label: "max", stroke: "#71717a", dash: [6, 4], values: (l) => l.smMax },
    ],
  },
];

export interface TelemetryLanesProps {
  samples: readonly GpuSample[];
  /** the GPUs to fold (default: every GPU in the samples) */
  gpuUuids?: readonly string[] | null;
  /** the time span, shared with the memory chart above; default: the samples' span */
  window?: { fromMs: number; toMs: number } | null;
  gutter?: TimeGutter;
  laneHeight?: number;
  /** e.g. "GPUs 0–3" — what the lanes fold, for the accessible label */
  subject?: string;
}

function lastKnown(xs: readonly (number | null)[]): number | null {
  for (let i = xs.length - 1; i >= 0; i--) if (xs[i] != null) return xs[i]!;
  return null;
}

export function TelemetryLanes({ samples, gpuUuids, window: win, gutter = TIME_GUTTER, laneHeight = 44, subject = "GPU" }: TelemetryLanesProps) {
  const lanes = useMemo(() => telemetryLanes(samples, { uuids: gpuUuids, fromMs: win?.fromMs, toMs: win?.toMs }), [samples, gpuUuids, win]);
  const UPlot = useUPlot();
  return (
    <LaneStack
      testId="telemetry-lanes"
      specs={LANES}
      data={lanes}
      UPlot={UPlot}
      gutter={gutter}
      laneHeight={laneHeight}
      win={win ?? null}
      subject={subject}
      notReported="not reported by nvidia-smi"
      note={(spec) => (spec.throttle && lanes.reasons.length > 0 ? `shaded: clocks held down (${lanes.reasons.join(", ")})` : null)}
    />
  );
}

/** uPlot, loaded in the browser on first render. */
export function useUPlot(): typeof uPlot | null {
  const [UPlot, setUPlot] = useState<typeof uPlot | null>(null);
  useEffect(() => {
    let alive = true;
    void import("uplot").then((m) => alive && setUPlot(() => m.default));
    return () => {
      alive = false;
    };
  }, []);
  return UPlot;
}

/** Lanes one above the other on one time axis, each titled with its latest values. */
export function LaneStack<T extends LaneData>(props: {
  testId: string;
  specs: readonly LaneSpec<T>[];
  data: T;
  UPlot: typeof uPlot | null;
  gutter: TimeGutter;
  laneHeight: number;
  win: { fromMs: number; toMs: number } | null;
  subject: string;
  notReported: string;
  note?: (spec: LaneSpec<T>) => string | null;
}) {
  const { testId, specs, data: lanes, UPlot, gutter, laneHeight, win, subject, notReported, note } = props;
  const [boxRef, width] = useElementWidth();
  const reported = (spec: LaneSpec<T>) => spec.series.some((s) => s.values(lanes).some((v) => v != null));
  return (
    <div ref={boxRef} className="w-full min-w-0" data-testid={testId}>
      {specs.map((spec) => (
        <div key={spec.key} className="min-w-0">
          <p className="flex flex-wrap gap-x-3 text-xs text-zinc-500 dark:text-zinc-400" style={{ paddingLeft: gutter.left }}>
            <span className="font-medium">
              {spec.title} ({spec.unit})
            </span>
            {spec.series.map((s) => {
              const v = lastKnown(s.values(lanes));
              return (
                <span key={s.label} className="tabular-nums">
                  <span aria-hidden style={{ color: s.stroke }}>
                    ━{" "}
                  </span>
                  {s.label} {v == null ? "not reported" : Math.round(v)}
                </span>
              );
            })}
            {note?.(spec) && <span>{note(spec)}</span>}
          </p>
          {reported(spec) ? (
            <Lane UPlot={UPlot} spec={spec} lanes={lanes} width={width} height={laneHeight} gutter={gutter} win={win} subject={subject} />
          ) : (
            <p className="text-xs text-zinc-500 dark:text-zinc-400" style={{ paddingLeft: gutter.left }}>
              {notReported}
            </p>
          )}
        </div>
      ))}
    </div>
  );
}

function Lane<T extends LaneData>(props: {
  UPlot: typeof uPlot | null;
  spec: LaneSpec<T>;
  lanes: T;
  width: number;
  height: number;
  gutter: TimeGutter;
  win: { fromMs: number; toMs: number } | null;
  subject: string;
}) {
  const { UPlot, spec, lanes, width, height, gutter, win, subject } = props;
  const el = useRef<HTMLDivElement | null>(null);
  const plot = useRef<uPlot | null>(null);
  useEffect(() => {
    const box = el.current;
    if (!UPlot || !box || width <= 0) return;
    const series: uPlot.Series[] = [
      {},
      ...spec.series.map((s) => ({ label: s.label, stroke: s.stroke, dash: s.dash, width: 1.25, spanGaps: false, points: { show: false } })),
    ];
    if (spec.throttle) {
      series.push({
        label: "clocks held down",
        scale: "held",
        stroke: "transparent",
        fill: "rgba(220,38,38,0.18)",
        paths: UPlot.paths.stepped!({ align: 1 }),
        points: { show: false },
      });
    }
    const u = new UPlot(
      {
        width,
        height,
        padding: [4, gutter.right, 0, 0],
        legend: { show: false },
        cursor: { drag: { x: false, y: false, setScale: false }, points: { show: false }, y: false },
        scales: {
          x: { time: true },
          y: spec.range ? { range: spec.range } : { range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] },
          held: { range: [0, 1] },
        },
        axes: [
          { show: false },
          {
            side: 3,
            size: gutter.left,
            gap: 4,
            stroke: "#71717a",
            ticks: { show: false },
            grid: { stroke: "rgba(128,128,128,0.15)" },
            font: "10px system-ui, sans-serif",
          },
        ],
        series,
      },
      [[]],
      box,
    );
    plot.current = u;
    return () => {
      u.destroy();
      plot.current = null;
    };
  }, [UPlot, spec, height, gutter.left, gutter.right, width > 0]); // eslint-disable-line react-hooks/exhaustive-deps

  useEffect(() => {
    plot.current?.setSize({ width, height });
  }, [width, height]);

  useEffect(() => {
    const u = plot.current;
    if (!u) return;
    const data: uPlot.AlignedData = [lanes.xs, ...spec.series.map((s) => s.values(lanes))];
    if (spec.throttle) data.push(lanes.throttled ?? []);
    u.batch(() => {
      u.setData(data);
      const lo = win ? win.fromMs / 1000 : lanes.xs[0];
      const hi = win ? win.toMs / 1000 : lanes.xs.at(-1);
      if (lo != null && hi != null && hi > lo) u.setScale("x", { min: lo, max: hi });
    });
  }, [lanes, spec, win, UPlot, width > 0]); // eslint-disable-line react-hooks/exhaustive-deps

  return <div ref={el} role="img" aria-label={`${subject} ${spec.title} over time (${spec.unit})`} className="w-full min-w-0 overflow-hidden" />;
}
