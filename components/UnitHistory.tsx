"use client";
/**
 * The unit's state timeline (with its engine's readiness lane, GPU-aware restarts and GPU faults)
 * and its GPU memory directly below, on one time axis: a long start-pre segment above a band of
 * memory draining to zero is the incident, at a glance.
 */
import { useCallback, useState } from "react";
import { GpuMemoryChart, type StackMode } from "@/components/gpu-chart/GpuMemoryChart";
import { auditUnitHref } from "@/components/fleet/links";
import { useNow } from "@/components/live/LiveProvider";
import { StateTimeline, type ActionMarker, type TimeRange } from "@/components/timeline/StateTimeline";
import { RANGE_MS } from "@/components/timeline/view";
import { useUnitHistory } from "@/components/useUnitHistory";
import type { UnitSummary } from "@/server/contract/types";

export function UnitHistory({ host, name, current }: { host: string; name: string; current?: UnitSummary }) {
  const now = useNow(1000);
  const [range, setRange] = useState<TimeRange>("15m");
  const [window, setWindow] = useState<{ fromMs: number; toMs: number } | null>(null);
  const [mode, setMode] = useState<StackMode>("sum");
  const [gpu, setGpu] = useState<string | null>(null);
  const [hoverMs, setHoverMs] = useState<number | null>(null);
  // history for the widest range once; the components clip to the window
  const [sinceMs] = useState(() => Date.now() - RANGE_MS["24h"]);
  const { transitions, actions, samples, unobserved, readiness, operations, faults, error } = useUnitHistory(host, name, sinceMs);

  const markers: ActionMarker[] = actions.map((a) => ({
    atMs: a.atMs,
    user: a.user,
    action: a.action,
    reason: a.reason ?? undefined,
    jobResult: a.outcome ?? (a.error ? `refused: ${a.error}` : undefined),
    auditId: a.id,
    href: auditUnitHref(name),
  }));
  const onWindowChange = useCallback((fromMs: number, toMs: number) => setWindow({ fromMs, toMs }), []);

  return (
    <section aria-labelledby="history-heading" className="space-y-1 rounded-lg border border-zinc-200 p-3 dark:border-zinc-800" data-testid="unit-history">
      <h2 id="history-heading" className="text-sm font-semibold">
        State and GPU memory
      </h2>
      {error && <p className="text-sm text-red-700">History unavailable: {error}</p>}
      <StateTimeline
        journalLinks
        transitions={transitions}
        markers={markers}
        range={range}
        onRangeChange={setRange}
        nowMs={now}
        onWindowChange={onWindowChange}
        unitName={name}
        unobserved={unobserved}
        readiness={readiness}
        currentReadiness={current?.readiness}
        operations={operations}
        faults={faults}
        current={current ? { activeState: current.activeState, subState: current.subState, sinceUsec: current.stateChangeUsec } : undefined}
        hoverMs={hoverMs}
        onHoverMs={setHoverMs}
      />
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
        onHoverMs={setHoverMs}
        height={200}
      />
    </section>
  );
}
