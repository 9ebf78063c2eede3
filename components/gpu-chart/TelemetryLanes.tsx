"use client";
/**
 * Small lanes under the GPU memory chart, on its time axis (same window, same gutter):
 * utilisation (GPU, memory controller), power (draw, limit), temperature and SM clock (now,
 * max) with the spans where clocks were held down shaded — the throttle reasons the GPU cards
 * name, in time. Not reported is a gap, never 0; a lane with nothing reported says so.
 * Drawn by LaneStack (SVG).
 */
import { useMemo } from "react";
import { TIME_GUTTER, type TimeGutter } from "@/components/timeline/layout";
import type { GpuSample } from "@/server/contract/types";
import { LaneStack, type LaneSpec } from "./LaneStack";
import { telemetryLanes, type TelemetryLanes as Lanes } from "./lanes";

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

export function TelemetryLanes({ samples, gpuUuids, window: win, gutter = TIME_GUTTER, laneHeight = 44, subject = "GPU" }: TelemetryLanesProps) {
  const lanes = useMemo(() => telemetryLanes(samples, { uuids: gpuUuids, fromMs: win?.fromMs, toMs: win?.toMs }), [samples, gpuUuids, win]);
  return (
    <LaneStack
      testId="telemetry-lanes"
      specs={LANES}
      data={lanes}
      gutter={gutter}
      laneHeight={laneHeight}
      win={win ?? null}
      subject={subject}
      notReported="not reported by nvidia-smi"
      note={(spec) => (spec.throttle && lanes.reasons.length > 0 ? `shaded: clocks held down (${lanes.reasons.join(", ")})` : null)}
    />
  );
}
