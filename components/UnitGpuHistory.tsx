"use client";
/**
 * The unit page's GPU memory chart and telemetry lanes, under the state timeline on its time
 * axis. Its own module so that the page loads it (the chart, the stacking and the lanes' code)
 * when it comes near the view, not with the page (bench/route-js.ts): UnitHistory draws it in a
 * WhenVisible placeholder of its height (GPU_HISTORY_HEIGHT there: the chart's heading, 200 px
 * plot and legend, and the four lanes).
 */
import { useMemo, useState } from "react";
import { GpuMemoryChart, type StackMode } from "@/components/gpu-chart/GpuMemoryChart";
import { unitGpuUuids } from "@/components/gpu-chart/stack";
import { TelemetryLanes } from "@/components/gpu-chart/TelemetryLanes";
import type { GpuSample, ObservationGap } from "@/server/contract/types";

export function UnitGpuHistory({
  samples,
  name,
  window,
  unobserved,
  hoverMs,
  onHoverMs,
}: {
  samples: readonly GpuSample[];
  name: string;
  window: { fromMs: number; toMs: number } | null;
  unobserved: readonly ObservationGap[];
  hoverMs: number | null;
  onHoverMs: (ms: number | null) => void;
}) {
  const [mode, setMode] = useState<StackMode>("sum");
  const [gpu, setGpu] = useState<string | null>(null);
  // the lanes fold the GPUs the memory chart shows: the one chosen, else the unit's
  const laneGpus = useMemo(
    () => (mode === "per-gpu" && gpu ? [gpu] : unitGpuUuids(samples, name, window?.fromMs, window?.toMs)),
    [mode, gpu, samples, name, window],
  );
  return (
    <>
      <GpuMemoryChart
        samples={samples}
        unit={name}
        mode={mode}
        onModeChange={setMode}
        selectedGpuUuid={gpu}
        onSelectedGpuChange={setGpu}
        window={window}
        unobserved={unobserved}
        hoverMs={hoverMs}
        onHoverMs={onHoverMs}
        height={200}
      />
      <TelemetryLanes samples={samples} gpuUuids={laneGpus} window={window} subject={laneGpus.length === 1 ? "the GPU's" : "the unit's GPUs'"} />
    </>
  );
}
