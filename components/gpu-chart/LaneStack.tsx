"use client";
/**
 * Small lanes one above the other on one time axis (the GPU telemetry under the memory chart,
 * the engine's latency and load under the readiness lane), each titled with its latest values.
 * Drawn as SVG like the state timeline and the memory chart (MemoryPlot): a few lines per lane
 * need none of a chart library's cursor, legend or zoom, and a library (uPlot was 22 KB
 * compressed) came with every page that draws a lane (bench/route-js.ts).
 */
import { useId, useMemo } from "react";
import type { TimeGutter } from "@/components/timeline/layout";
import { useElementWidth } from "@/components/useElementWidth";
import { laneGeometry } from "./lanePlot";

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

function lastKnown(xs: readonly (number | null)[]): number | null {
  for (let i = xs.length - 1; i >= 0; i--) if (xs[i] != null) return xs[i]!;
  return null;
}

export function LaneStack<T extends LaneData>(props: {
  testId: string;
  specs: readonly LaneSpec<T>[];
  data: T;
  gutter: TimeGutter;
  laneHeight: number;
  win: { fromMs: number; toMs: number } | null;
  subject: string;
  notReported: string;
  note?: (spec: LaneSpec<T>) => string | null;
}) {
  const { testId, specs, data: lanes, gutter, laneHeight, win, subject, notReported, note } = props;
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
            <LanePlot spec={spec} lanes={lanes} width={width} height={laneHeight} gutter={gutter} win={win} subject={subject} />
          ) : (
            // a lane's height either way: the lanes below do not move when its first value comes
            <p className="flex items-center text-xs text-zinc-500 dark:text-zinc-400" style={{ paddingLeft: gutter.left, height: laneHeight }}>
              {notReported}
            </p>
          )}
        </div>
      ))}
    </div>
  );
}

function LanePlot<T extends LaneData>(props: {
  spec: LaneSpec<T>;
  lanes: T;
  width: number;
  height: number;
  gutter: TimeGutter;
  win: { fromMs: number; toMs: number } | null;
  subject: string;
}) {
  const { spec, lanes, width, height, gutter, win, subject } = props;
  const clipId = `lane-${useId().replace(/:/g, "")}`;
  const g = useMemo(
    () =>
      width > 0
        ? laneGeometry({
            xs: lanes.xs,
            series: spec.series.map((s) => s.values(lanes)),
            throttled: spec.throttle ? lanes.throttled : null,
            width,
            height,
            gutter,
            win,
            range: spec.range,
          })
        : null,
    [lanes, spec, width, height, gutter, win],
  );
  return (
    <div role="img" aria-label={`${subject} ${spec.title} over time (${spec.unit})`} className="w-full min-w-0 overflow-hidden" style={{ height }}>
      {g && (
        <svg width={width} height={height} className="block" aria-hidden>
          <clipPath id={clipId}>
            <rect x={g.plot.left} y={0} width={g.plot.right - g.plot.left} height={height} />
          </clipPath>
          {g.held.map((h) => (
            <rect key={h.x} x={h.x} y={g.plot.top} width={h.w} height={g.plot.bottom - g.plot.top} fill="rgba(220,38,38,0.18)" />
          ))}
          {g.ticks.map((t) => (
            <g key={t.label}>
              <line x1={g.plot.left} x2={g.plot.right} y1={t.y} y2={t.y} stroke="rgba(128,128,128,0.2)" />
              <text
                x={g.plot.left - 4}
                y={Math.min(Math.max(t.y, 6), height - 4)}
                textAnchor="end"
                dominantBaseline="middle"
                fill="#71717a"
                style={{ font: "10px system-ui, sans-serif" }}
              >
                {t.label}
              </text>
            </g>
          ))}
          <g clipPath={`url(#${clipId})`}>
            {spec.series.map((s, i) =>
              g.paths[i] ? (
                <path
                  key={s.label}
                  d={g.paths[i]}
                  fill="none"
                  stroke={s.stroke}
                  strokeWidth={1.25}
                  strokeDasharray={s.dash?.join(" ")}
                  strokeLinejoin="round"
                  vectorEffect="non-scaling-stroke"
                />
              ) : null,
            )}
          </g>
        </svg>
      )}
    </div>
  );
}
