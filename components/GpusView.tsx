"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useState } from "react";
import { HostHeader } from "@/components/fleet/HostHeader";
import { hostUnitHref } from "@/components/fleet/links";
import { formatDuration, formatMiB, formatUsedOfTotal } from "@/server/contract/format";
import { GpuTelemetryChart } from "@/components/GpuTelemetryChart";
import { useLive, useNow } from "@/components/live/LiveProvider";
import { useTRPC } from "@/components/trpc";
import { mergeSamples } from "@/components/useUnitHistory";
import type { GpuHolder } from "@/server/contract/types";

const STATE_TEXT = (h: GpuHolder) =>
  h.kind === "exited" ? "exited, still holding" : h.state === "zombie" ? "zombie" : h.state === "uninterruptible" ? "uninterruptible (D)" : h.state;

/** Every GPU of one host: memory, utilisation, temperature, power over time, and who holds its memory. */
export function GpusView({ host }: { host: string }) {
  const trpc = useTRPC();
  const store = useLive();
  const live = store.host(host);
  const now = useNow();
  const [sinceMs] = useState(() => Date.now() - 30 * 60_000);
  const history = useQuery(trpc.gpus.history.queryOptions({ host, sinceMs }, { staleTime: Infinity }));
  // a host snapshot (the agent came back): what it sampled meanwhile is in its history
  const snapshots = live?.snapshots ?? 0;
  const { refetch } = history;
  useEffect(() => {
    if (snapshots > 1) void refetch();
  }, [snapshots, refetch]);
  const samples = mergeSamples(history.data ?? [], live?.gpuRecent ?? []);
  const sample = live?.gpu ?? null;
  const telemetry = live?.telemetry ?? null;
  // e.g. no such host: the header says why
  if (store.problem && !live?.summary) return <HostHeader host={host} page="gpus" />;

  return (
    <div className="space-y-5">
      <HostHeader host={host} page="gpus" />
      <div className="flex flex-wrap items-baseline gap-3">
        {telemetry && (
          <span
            className={`text-sm ${telemetry.state === "ok" ? "text-zinc-500" : "font-semibold text-red-700 dark:text-red-400"}`}
            data-testid="telemetry-status"
          >
            telemetry {telemetry.state}: {telemetry.message}
          </span>
        )}
      </div>
      {!sample && <p className="text-sm text-zinc-500">No GPU sample yet.</p>}
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
              <span className="font-mono text-xs text-zinc-500">{g.uuid}</span>
            </div>
            <dl className="mt-1 flex flex-wrap gap-x-5 gap-y-1 text-sm">
              <div>
                <dt className="inline text-zinc-500">memory </dt>
                <dd className="inline font-medium tabular-nums">{formatUsedOfTotal(g.memoryUsedMiB, g.memoryTotalMiB)}</dd>
              </div>
              <div>
                <dt className="inline text-zinc-500">util </dt>
                <dd className="inline tabular-nums">{g.utilizationPct ?? "n/a"}%</dd>
              </div>
              <div>
                <dt className="inline text-zinc-500">temp </dt>
                <dd className="inline tabular-nums">{g.temperatureC ?? "n/a"} °C</dd>
              </div>
              <div>
                <dt className="inline text-zinc-500">power </dt>
                <dd className="inline tabular-nums">{g.powerW ?? "n/a"} W</dd>
              </div>
            </dl>
            <GpuTelemetryChart samples={samples} uuid={g.uuid} />
            <div className="mt-2 overflow-x-auto">
              <table className="w-full text-left text-xs">
                <caption className="sr-only">Processes holding memory on GPU {g.index}</caption>
                <thead className="text-zinc-500">
                  <tr>
                    <th className="py-1 pr-2 font-medium">PID</th>
                    <th className="py-1 pr-2 font-medium">process</th>
                    <th className="py-1 pr-2 font-medium">unit</th>
                    <th className="py-1 pr-2 text-right font-medium">memory</th>
                    <th className="py-1 font-medium">state</th>
                  </tr>
                </thead>
                <tbody>
                  {g.holders.map((h) => (
                    <tr
                      key={`${h.kind}-${h.pid}`}
                      className={h.kind === "exited" ? "text-fuchsia-800 dark:text-fuchsia-300" : ""}
                      data-testid="gpu-process"
                      data-kind={h.kind}
                    >
                      <td className="py-0.5 pr-2 font-mono">{h.pid}</td>
                      <td className="max-w-48 truncate py-0.5 pr-2 font-mono" title={h.cmdline.join(" ")}>
                        {h.processName}
                      </td>
                      <td className="py-0.5 pr-2 font-mono">
                        {h.unit ? (
                          <Link className="underline-offset-2 hover:underline" href={hostUnitHref(host, h.unit)}>
                            {h.unit}
                          </Link>
                        ) : (
                          <span className="text-zinc-500">outside any unit</span>
                        )}
                      </td>
                      <td className="py-0.5 pr-2 text-right tabular-nums">{formatMiB(h.usedMiB)}</td>
                      <td className="py-0.5">
                        {STATE_TEXT(h)}
                        {h.kind === "exited" && h.exitedAtMs ? ` (${formatDuration(now - h.exitedAtMs)} ago)` : ""}
                      </td>
                    </tr>
                  ))}
                  {g.unattributedMiB > 0 && (
                    <tr className="text-zinc-500">
                      <td className="py-0.5 pr-2">—</td>
                      <td className="py-0.5 pr-2" colSpan={2}>
                        no process listed by nvidia-smi
                      </td>
                      <td className="py-0.5 pr-2 text-right tabular-nums">{formatMiB(g.unattributedMiB)}</td>
                      <td />
                    </tr>
                  )}
                  {g.holders.length === 0 && g.unattributedMiB === 0 && (
                    <tr>
                      <td colSpan={5} className="py-1 text-zinc-500">
                        No process holds memory on this GPU.
                      </td>
                    </tr>
                  )}
                </tbody>
              </table>
            </div>
          </section>
        ))}
      </div>
    </div>
  );
}
