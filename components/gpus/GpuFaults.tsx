"use client";
/**
 * The GPUs page's fault list: NVIDIA Xid errors from the host's kernel log (`gpus.faults` and live
 * `fault` events), newest first, each with its GPU, the process and unit it hit, what it means,
 * what to do, and whether the GPU needs a reset (restarting the unit will not help then).
 */
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { hostUnitHref } from "@/components/fleet/links";
import { useLive } from "@/components/live/LiveProvider";
import { useTRPC } from "@/components/trpc";
import { formatTime } from "@/server/contract/format";
import type { GpuFault } from "@/server/contract/faults";

const SHOWN = 20;
const SEVERITY_CLASS: Record<GpuFault["severity"], string> = {
  critical: "border-red-400 bg-red-50 text-red-950 dark:border-red-800 dark:bg-red-950/60 dark:text-red-100",
  warning: "border-amber-400 bg-amber-50 text-amber-950 dark:border-amber-700 dark:bg-amber-950/60 dark:text-amber-100",
  info: "border-zinc-300 bg-zinc-50 text-zinc-900 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100",
};

/** The host's faults, newest first: history merged with what arrived live. */
export function useHostFaults(host: string): { faults: GpuFault[]; error: string | null } {
  const trpc = useTRPC();
  const hostLive = useLive().host(host);
  const query = useQuery(trpc.gpus.faults.queryOptions({ host }, { refetchInterval: 60_000, retry: false, enabled: hostLive?.isLive === true }));
  const byId = new Map<string, GpuFault>();
  for (const f of [...(query.data ?? []), ...(hostLive?.faults ?? [])]) byId.set(f.id, f);
  return { faults: [...byId.values()].sort((a, b) => b.atMs - a.atMs), error: query.error?.message ?? null };
}

export function GpuFaults({ host, faults, error }: { host: string; faults: readonly GpuFault[]; error: string | null }) {
  const [all, setAll] = useState(false);
  const shown = all ? faults : faults.slice(0, SHOWN);
  return (
    <section aria-labelledby="faults-heading" className="space-y-2" data-testid="gpu-faults">
      <h2 id="faults-heading" className="text-lg font-semibold">
        GPU faults (NVIDIA Xid)
      </h2>
      {error && <p className="text-sm text-zinc-500 dark:text-zinc-400">Faults unavailable: {error}</p>}
      {!error && faults.length === 0 && <p className="text-sm text-zinc-500 dark:text-zinc-400">No Xid error in this boot&apos;s kernel log.</p>}
      <ul className="space-y-2">
        {shown.map((f) => (
          <li key={f.id} className={`rounded-md border px-3 py-2 text-sm ${SEVERITY_CLASS[f.severity]}`} data-testid="gpu-fault" data-code={f.code}>
            <p className="flex flex-wrap items-baseline gap-x-2">
              <b>
                Xid {f.code}: {f.title}
              </b>
              <span className="text-xs uppercase tracking-wide">{f.severity}</span>
              {f.resetRequired && <span className="rounded bg-red-800 px-1.5 text-xs font-semibold text-white">reset required</span>}
              <span className="text-xs tabular-nums">{formatTime(f.atMs, { date: "auto" })}</span>
            </p>
            <p className="text-xs">
              {f.gpuIndex != null ? `GPU ${f.gpuIndex}` : "GPU not identified"} (PCI {f.pci})
              {f.pid != null && ` · PID ${f.pid}${f.processName ? ` (${f.processName})` : ""}`}
              {f.unit ? (
                <>
                  {" · "}
                  <Link className="font-mono underline-offset-2 hover:underline" href={hostUnitHref(host, f.unit)}>
                    {f.unit}
                  </Link>
                </>
              ) : (
                " · no unit known"
              )}
            </p>
            <p className="mt-1">{f.meaning}</p>
            <p>
              <b>Next step:</b> {f.advice}
            </p>
          </li>
        ))}
      </ul>
      {faults.length > SHOWN && (
        <button type="button" onClick={() => setAll(!all)} className="text-sm underline">
          {all ? `Show the newest ${SHOWN}` : `Show all ${faults.length}`}
        </button>
      )}
    </section>
  );
}
