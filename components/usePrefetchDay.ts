"use client";
/**
 * The unit page's 24 h history (units.timeline, bucketed to the chart's width), fetched into the
 * query cache while the browser is idle, a second after the page has drawn (its first view and
 * the live stream's first snapshot go first), so choosing "24 h" draws from
 * the cache instead of waiting for the agent (issue 21: the switch ≤ 300 ms). Asked again when
 * the day's rounded start moves on (every 5 minutes, timelineSince), and only while the page is
 * shown: a tab in the background asks for nothing.
 */
import { useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { useNow } from "@/components/live/LiveProvider";
import { RANGE_MS } from "@/components/timeline/view";
import { useTRPC } from "@/components/trpc";
import { historyPoints, timelineSince } from "@/components/useUnitHistory";

/** Run `fn` when the browser is idle (a timer where there is no requestIdleCallback); the canceller. */
export function whenIdle(fn: () => void, timeoutMs = 5_000): () => void {
  if (typeof requestIdleCallback === "function") {
    const id = requestIdleCallback(fn, { timeout: timeoutMs });
    return () => cancelIdleCallback(id);
  }
  const t = setTimeout(fn, 1_000);
  return () => clearTimeout(t);
}

export function usePrefetchDay(host: string, name: string, widthPx: number, enabled: boolean): void {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const now = useNow(30_000);
  const since = timelineSince(now - RANGE_MS["24h"], now);
  const points = historyPoints(widthPx);
  useEffect(() => {
    if (!enabled) return;
    let cancelIdle: (() => void) | null = null;
    const t = setTimeout(() => {
      cancelIdle = whenIdle(() => {
        if (typeof document !== "undefined" && document.visibilityState === "hidden") return;
        // the same options as useUnitHistory's query: the cached answer is the one it asks for
        void queryClient.prefetchQuery(trpc.units.timeline.queryOptions({ host, name, sinceMs: since, points }, { staleTime: Infinity }));
      });
    }, 1_000);
    return () => {
      clearTimeout(t);
      cancelIdle?.();
    };
  }, [enabled, host, name, since, points, queryClient, trpc]);
}
