"use client";
/**
 * A unit's transitions, action markers, readiness changes, GPU-aware operations and GPU faults
 * (history from the agent + what arrived live), and GPU samples for the same window. History is
 * refetched when the live stream had to restart from a snapshot, so a reconnect never leaves a
 * hole in the timeline. GPU memory comes with the timeline, bucketed by the agent to about
 * `points` rows (the chart's width in pixels) over the range shown: a day is a few hundred KB,
 * fetched only when the 24 h range is chosen.
 */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useEffect, useMemo } from "react";
import { useLive } from "@/components/live/LiveProvider";
import { useTRPC } from "@/components/trpc";
import { mergeReadiness } from "@/components/timeline/readinessSegments";
import type { ActionRecord } from "@/server/contract/events";
import type { GpuFault } from "@/server/contract/faults";
import { decodeGpuHistory } from "@/server/contract/gpuHistory";
import type { Operation } from "@/server/contract/operations";
import type { GpuSample, ObservationGap, UnitTransition } from "@/server/contract/types";

export function mergeTransitions(history: UnitTransition[], live: UnitTransition[], unit: string): UnitTransition[] {
  const key = (t: UnitTransition) => `${t.atUsec}|${t.to.activeState}|${t.to.subState}`;
  const seen = new Set<string>();
  const out: UnitTransition[] = [];
  for (const t of [...history, ...live.filter((x) => x.unit === unit)]) {
    const k = key(t);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(t);
  }
  return out.sort((a, b) => a.atUsec - b.atUsec);
}

export function mergeSamples(history: GpuSample[], live: GpuSample[]): GpuSample[] {
  const lastHistory = history.at(-1)?.atMs ?? 0;
  return [...history, ...live.filter((s) => s.atMs > lastHistory)];
}

const NO_GAPS: ObservationGap[] = [];

/** Points asked for: the chart's width, bounded; rounded so a resize by a few pixels refetches nothing. */
export function historyPoints(widthPx: number): number {
  return Math.min(4000, Math.max(200, Math.ceil(widthPx / 100) * 100));
}

/**
 * The start asked for, rounded so the query key is stable between renders: to the minute, and
 * for a range of more than 12 h to 5 minutes, so the day prefetched while the page was idle
 * (usePrefetchDay) is the day asked for when "24 h" is chosen minutes later.
 */
export function timelineSince(sinceMs: number, nowMs = Date.now()): number {
  const step = nowMs - sinceMs > 12 * 3600_000 ? 300_000 : 60_000;
  return Math.floor(sinceMs / step) * step;
}

export function useUnitHistory(host: string, name: string, sinceMs: number, widthPx = 1200) {
  const trpc = useTRPC();
  const live = useLive().host(host);
  const since = timelineSince(sinceMs);
  const points = historyPoints(widthPx);
  const timeline = useQuery(
    trpc.units.timeline.queryOptions({ host, name, sinceMs: since, points }, { staleTime: Infinity, placeholderData: keepPreviousData }),
  );
  const gpuSeries = timeline.data?.gpu;
  const gpuHistory = useMemo(() => (gpuSeries ? decodeGpuHistory(gpuSeries) : []), [gpuSeries]);
  const snapshots = live?.snapshots ?? 0;
  const { refetch: refetchTimeline } = timeline;
  useEffect(() => {
    // every snapshot of the host (the first too): a transition between the history fetch and the
    // stream start is not lost, nor what happened while the agent was away
    if (snapshots > 0) void refetchTimeline();
  }, [snapshots, refetchTimeline]);

  const transitions = mergeTransitions(timeline.data?.transitions ?? [], live?.transitions ?? [], name);
  const actionMap = new Map<string, ActionRecord>();
  for (const a of timeline.data?.actions ?? []) actionMap.set(a.id, a);
  for (const a of live?.actions.values() ?? []) if (a.unit === name) actionMap.set(a.id, a);
  const actions = [...actionMap.values()].sort((a, b) => a.atMs - b.atMs);
  const samples = mergeSamples(gpuHistory, live?.gpuRecent ?? []);
  // Spans no agent watched: known only from history (an agent learns them when it starts), never live.
  const unobserved = timeline.data?.unobserved ?? NO_GAPS;
  const readiness = mergeReadiness(
    timeline.data?.readiness ?? [],
    (live?.readinessTransitions ?? []).filter((t) => t.unit === name),
  );
  // the newest report of each operation; each fault once
  const operationMap = new Map<string, Operation>();
  for (const o of [...(timeline.data?.operations ?? []), ...(live?.operations.values() ?? [])]) {
    const known = operationMap.get(o.id);
    if (o.unit === name && (!known || o.atMs >= known.atMs)) operationMap.set(o.id, o);
  }
  const faultMap = new Map<string, GpuFault>();
  for (const f of [...(timeline.data?.faults ?? []), ...(live?.faults ?? [])]) if (f.unit === name) faultMap.set(f.id, f);
  return {
    transitions,
    actions,
    samples,
    unobserved,
    readiness,
    operations: [...operationMap.values()],
    faults: [...faultMap.values()],
    loading: timeline.isLoading,
    error: timeline.error?.message ?? null,
  };
}
