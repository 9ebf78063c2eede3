"use client";
import { useQuery } from "@tanstack/react-query";
import { useEffect, useMemo, useState } from "react";
import { HostHeader } from "@/components/fleet/HostHeader";
import { GpuFaults, useHostFaults } from "@/components/gpus/GpuFaults";
import { GpuHealth } from "@/components/gpus/GpuHealth";
import { GpuHolders } from "@/components/gpus/GpuHolders";
import { MemoryPoolNote } from "@/components/gpus/MemoryPoolNote";
import { formatUsedOfTotal } from "@/server/contract/format";
import { decodeGpuHistory } from "@/server/contract/gpuHistory";
import { TelemetryLanes } from "@/components/gpu-chart/TelemetryLanes";
import { useLive, useNow } from "@/components/live/LiveProvider";
import { useTRPC } from "@/components/trpc";
import { mergeSamples } from "@/components/useUnitHistory";

/**
 * Every GPU of one host: memory, utilisation, power, temperature and SM clock over time (lanes,
 * with the spans its clocks were held down shaded), why its clocks are held down now, ECC errors, and who holds its memory; on unified-memory hosts the system memory they
 * share; below, the host's GPU faults (Xid).
 */
export function GpusView({ host }: { host: string }) {
  const trpc = useTRPC();
  const store = useLive();
  const live = store.host(host);
  const now = useNow();
  const [sinceMs] = useState(() => Date.now() - 30 * 60_000);
  // bucketed by the agent at about a card's width (30 min at 1 s would be 1,800 rows per GPU)
  const history = useQuery(trpc.gpus.history.queryOptions({ host, sinceMs, points: 600 }, { staleTime: Infinity }));
  // a host snapshot (the agent came back): what it sampled meanwhile is in its history
  const snapshots = live?.snapshots ?? 0;
  const { refetch } = history;
  useEffect(() => {
    if (snapshots > 1) void refetch();
  }, [snapshots, refetch]);
  const series = history.data;
  const decoded = useMemo(() => (series && !Array.isArray(series) ? decodeGpuHistory(series) : (series ?? [])), [series]);
  const samples = mergeSamples(decoded, live?.gpuRecent ?? []);
  const sample = live?.gpu ?? null;
  const telemetry = live?.telemetry ?? null;
  const { faults, error: faultsError } = useHostFaults(host);
  // e.g. no such host: the header says why
  if (store.problem && !live?.summary) return <HostHeader host={host} page="gpus" />;

  return (
    <div className="space-y-5">
      <HostHeader host={host} page="gpus" />
      <div className="flex flex-wrap items-baseline gap-3">
        {telemetry && (
          <span
            className={`text-sm ${telemetry.state === "ok" ? "text-zinc-500 dark:text-zinc-400" : "font-semibold text-red-700 dark:text-red-400"}`}
            data-testid="telemetry-status"
          >
            telemetry {telemetry.state}: {telemetry.message}
          </span>
        )}
      </div>
      {!sample && <p className="text-sm text-zinc-500 dark:text-zinc-400">No GPU sample yet.</p>}
      <MemoryPoolNote pool={sample?.memoryPool} />
      <div className="grid gap-4 lg:grid-cols-2">
        {sample?.gpus.map((g) => (
          <section
            key={g.uuid}
            aria-labelledby={`gpu-${g.uuid}`}
            className="min-w-0 rounded-lg border border-zinc-200 p-3 dark:border-zinc-800"
            data-testid="gpu-card"
          >
            <div className="flex flex-wrap items-baseline gap-x-3">
              <h2 id={`gpu-${g.uuid}`} className="font-semibold">
                GPU {g.index ?? "?"} · {g.name}
              </h2>
              <span className="font-mono text-xs text-zinc-500 dark:text-zinc-400">{g.uuid}</span>
            </div>
            <dl className="mt-1 flex flex-wrap gap-x-5 gap-y-1 text-sm">
              <div>
                <dt className="inline text-zinc-500 dark:text-zinc-400">memory </dt>
                <dd className="inline font-medium tabular-nums">
                  {sample.memoryPool && g.memoryTotalMiB == null ? "shares system memory" : formatUsedOfTotal(g.memoryUsedMiB, g.memoryTotalMiB)}
                </dd>
              </div>
              <div>
                <dt className="inline text-zinc-500 dark:text-zinc-400">util </dt>
                <dd className="inline tabular-nums">{g.utilizationPct == null ? "n/a" : `${g.utilizationPct} %`}</dd>
              </div>
              <div>
                <dt className="inline text-zinc-500 dark:text-zinc-400">temp </dt>
                <dd className="inline tabular-nums">{g.temperatureC == null ? "n/a" : `${g.temperatureC} °C`}</dd>
              </div>
              <div>
                <dt className="inline text-zinc-500 dark:text-zinc-400">power </dt>
                <dd className="inline tabular-nums">
                  {g.powerW == null ? "n/a" : `${g.powerW} W`}
                  {g.powerLimitW != null && ` of ${g.powerLimitW} W`}
                </dd>
              </div>
              {g.smClockMHz != null && (
                <div>
                  <dt className="inline text-zinc-500 dark:text-zinc-400">SM clock </dt>
                  <dd className="inline tabular-nums">
                    {g.smClockMHz} MHz{g.smClockMaxMHz != null && ` of ${g.smClockMaxMHz}`}
                  </dd>
                </div>
              )}
            </dl>
            <TelemetryLanes samples={samples} gpuUuids={[g.uuid]} subject={`GPU ${g.index ?? "?"}`} laneHeight={40} />
            <GpuHealth gpu={g} faults={faults.filter((f) => f.gpuUuid === g.uuid || (f.gpuIndex != null && f.gpuIndex === g.index)).length} />
            <GpuHolders host={host} gpu={g} nowMs={now} />
          </section>
        ))}
      </div>
      <GpuFaults host={host} faults={faults} error={faultsError} />
    </div>
  );
}
