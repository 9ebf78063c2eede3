"use client";
/**
 * The unit's state timeline (with its engine's readiness lane, GPU-aware restarts and GPU faults)
 * and its GPU memory directly below, on one time axis: a long start-pre segment above a band of
 * memory draining to zero is the incident, at a glance.
 */
import { lazy, useCallback, useState } from "react";
import { EngineLanes } from "@/components/timeline/EngineLanes";
import { useElementWidth } from "@/components/useElementWidth";
import { auditUnitHref } from "@/components/fleet/links";
import { useNow } from "@/components/live/LiveProvider";
import { StateTimeline, type ActionMarker, type TimeRange } from "@/components/timeline/StateTimeline";
import { RANGE_MS } from "@/components/timeline/view";
import { historyPoints, useUnitHistory } from "@/components/useUnitHistory";
import { usePrefetchDay } from "@/components/usePrefetchDay";
import { WhenVisible } from "@/components/WhenVisible";
import type { UnitSummary } from "@/server/contract/types";

// below the timeline (at the fold of a laptop's screen): the chart, its stacking and lanes come
// when scrolled to (the page's JavaScript budget, bench/route-js.ts), in a placeholder of its height
const UnitGpuHistory = lazy(() => import("@/components/UnitGpuHistory").then((m) => ({ default: m.UnitGpuHistory })));
/** the chart (heading, 200 px plot, legend) and its four lanes, as drawn: no jump when they come */
const GPU_HISTORY_HEIGHT = 512;

export function UnitHistory({ host, name, current }: { host: string; name: string; current?: UnitSummary }) {
  const now = useNow(1000);
  const [range, setRange] = useState<TimeRange>("15m");
  const [window, setWindow] = useState<{ fromMs: number; toMs: number } | null>(null);
  const [hoverMs, setHoverMs] = useState<number | null>(null);
  // history for the range chosen (24 h only when asked for), at about the chart's width in points;
  // the components clip to the window. The start moves with the range, not with the clock.
  const [sinceMs, setSinceMs] = useState(() => Date.now() - RANGE_MS["15m"]);
  const onRangeChange = useCallback((r: TimeRange) => {
    setRange(r);
    setSinceMs(Date.now() - RANGE_MS[r]);
  }, []);
  const [box, widthPx] = useElementWidth(1200);
  const { transitions, actions, samples, unobserved, readiness, operations, faults, error, loading } = useUnitHistory(host, name, sinceMs, widthPx);
  // the day, fetched while the page is idle once it has drawn, so choosing "24 h" draws at once
  usePrefetchDay(host, name, widthPx, range !== "24h" && !loading);

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
        State, GPU memory and telemetry
      </h2>
      <div ref={box} aria-hidden className="h-0 w-full" />
      {error && <p className="text-sm text-red-700">History unavailable: {error}</p>}
      <StateTimeline
        journalLinks
        transitions={transitions}
        markers={markers}
        range={range}
        onRangeChange={onRangeChange}
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
      <EngineLanes host={host} name={name} sinceMs={sinceMs} points={historyPoints(widthPx)} window={window} />
      <WhenVisible name="gpu-history" minHeight={GPU_HISTORY_HEIGHT} label="GPU memory and telemetry">
        <UnitGpuHistory samples={samples} name={name} window={window} unobserved={unobserved} hoverMs={hoverMs} onHoverMs={setHoverMs} />
      </WhenVisible>
    </section>
  );
}
