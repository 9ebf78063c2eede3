"use client";
/**
 * The engine's latency and load under the readiness lane (units.engineHistory): time to first
 * token and inter-token latency p50/p95, requests running and waiting, KV-cache usage and tokens
 * per second, on the timeline's time axis. Not reported is a gap; an engine without metrics says
 * so in one line.
 */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { LaneStack, type LaneSpec } from "@/components/gpu-chart/LaneStack";
import { TIME_GUTTER } from "@/components/timeline/layout";
import { useTRPC } from "@/components/trpc";
import type { EngineHistoryRow } from "@/server/contract/readiness";

interface EngineData {
  xs: number[];
  rows: EngineHistoryRow[];
}

const col =
  (k: keyof EngineHistoryRow, scale = 1) =>
  (d: EngineData) =>
    d.rows.map((r) => (r[k] == null ? null : (r[k] as number) * scale));

/** px of each lane's plot; a lane is this and its one-line title */
const LANE_HEIGHT = 40;

const ENGINE_LANES: LaneSpec<EngineData>[] = [
  {
    key: "ttft",
    title: "time to first token",
    unit: "ms",
    series: [
      { label: "p50", stroke: "#2563eb", values: col("ttftP50Ms") },
      { label: "p95", stroke: "#dc2626", dash: [4, 3], values: col("ttftP95Ms") },
    ],
  },
  {
    key: "itl",
    title: "inter-token latency",
    unit: "ms",
    series: [
      { label: "p50", stroke: "#0891b2", values: col("itlP50Ms") },
      { label: "p95", stroke: "#c026d3", dash: [4, 3], values: col("itlP95Ms") },
    ],
  },
  {
    key: "load",
    title: "requests",
    unit: "count",
    series: [
      { label: "running", stroke: "#16a34a", values: col("running") },
      { label: "waiting", stroke: "#ea580c", dash: [4, 3], values: col("waiting") },
    ],
  },
  {
    key: "kv",
    title: "KV cache and throughput",
    unit: "% · tokens/s",
    series: [
      { label: "KV cache %", stroke: "#7c3aed", values: col("kvCacheUsage", 100) },
      { label: "tokens/s", stroke: "#71717a", dash: [6, 4], values: col("tokensPerSecond") },
    ],
  },
];

export function EngineLanes({
  host,
  name,
  sinceMs,
  points,
  window: win,
}: {
  host: string;
  name: string;
  sinceMs: number;
  points: number;
  window: { fromMs: number; toMs: number } | null;
}) {
  const trpc = useTRPC();
  const since = Math.floor(sinceMs / 60_000) * 60_000;
  const q = useQuery(
    trpc.units.engineHistory.queryOptions(
      { host, name, sinceMs: since, points },
      { staleTime: 20_000, refetchInterval: 30_000, placeholderData: keepPreviousData },
    ),
  );
  const data = useMemo<EngineData>(() => {
    const rows = q.data ?? [];
    return { rows, xs: rows.map((r) => r.atMs / 1000) };
  }, [q.data]);
  // its height while the first answer comes: no jump, and the GPU chart below stays below the fold
  if (q.isPending) return <div style={{ minHeight: ENGINE_LANES.length * (LANE_HEIGHT + 16) }} aria-busy="true" data-testid="engine-lanes-loading" />;
  if (q.error) return <p className="text-xs text-zinc-500 dark:text-zinc-400">Engine history unavailable: {q.error.message}</p>;
  if (data.rows.length === 0) {
    return (
      <p className="text-xs text-zinc-500 dark:text-zinc-400" style={{ paddingLeft: TIME_GUTTER.left }} data-testid="engine-lanes-empty">
        engine latency and load: not reported in this range (no engine metrics scraped)
      </p>
    );
  }
  return (
    <LaneStack
      testId="engine-lanes"
      specs={ENGINE_LANES}
      data={data}
      gutter={TIME_GUTTER}
      laneHeight={LANE_HEIGHT}
      win={win}
      subject="the engine's"
      notReported="not reported by the engine"
    />
  );
}
