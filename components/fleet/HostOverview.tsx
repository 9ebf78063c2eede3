"use client";
/**
 * `/hosts/[host]`: one host as the single-host panel showed it: its units (failed and stuck
 * first, filtered by state and text, kept in the URL) and its GPU strip. On a phone the units
 * come first; on wider screens the GPU strip leads.
 */
import { GpuStrip } from "@/components/gpu-chart/GpuStrip";
import { MemoryPoolNote } from "@/components/gpus/MemoryPoolNote";
import { useLive, useNow } from "@/components/live/LiveProvider";
import { HostHeader } from "./HostHeader";
import { hostUnitHref } from "./links";
import { matchesUnitFilter } from "./unitFilter";
import { UnitFilters } from "./UnitFilters";
import { UnitList } from "./UnitList";
import { sortUnits } from "./unitOrder";
import { useUnitFilter } from "./useUnitFilter";

export function HostOverview({ host }: { host: string }) {
  const live = useLive();
  const now = useNow();
  const { filter, setText, setParam, searchRef } = useUnitFilter();
  const h = live.host(host);
  const units = h ? [...h.units.values()] : [];
  const hostState = h?.summary?.state ?? "connecting";
  const listed = sortUnits(
    units.filter((u) => matchesUnitFilter(u, { ...filter, host: "" }, now)),
    now,
  ).map((unit) => ({ host, hostState, unit }));
  // e.g. no such host: the header says why, and there is nothing else to show
  if (live.problem && !h?.summary) return <HostHeader host={host} page="units" />;

  return (
    <div className="flex flex-col gap-6">
      <HostHeader host={host} page="units" />
      <section aria-labelledby="gpus-heading" className="order-2 space-y-2 sm:order-1">
        <div className="flex items-baseline gap-3">
          <h2 id="gpus-heading" className="text-lg font-semibold">
            GPU memory
          </h2>
          {h?.telemetry && h.telemetry.state !== "ok" && (
            <span className="text-sm font-medium text-red-700 dark:text-red-400">
              telemetry {h.telemetry.state}: {h.telemetry.message}
            </span>
          )}
        </div>
        <MemoryPoolNote pool={h?.gpu?.memoryPool} />
        {h?.gpu ? (
          <GpuStrip gpus={h.gpu.gpus} unitHref={(u) => hostUnitHref(host, u)} />
        ) : (
          <p className="text-sm text-zinc-500 dark:text-zinc-400">No GPU sample yet.</p>
        )}
      </section>
      <section aria-labelledby="units-heading" className="order-1 space-y-3 sm:order-2">
        <div className="flex flex-wrap items-end gap-3">
          <h2 id="units-heading" className="text-lg font-semibold">
            Units
          </h2>
          <UnitFilters filter={filter} searchRef={searchRef} onText={setText} onParam={setParam} />
        </div>
        {!h?.summary ? (
          <p className="text-sm text-zinc-500 dark:text-zinc-400">Connecting…</p>
        ) : listed.length === 0 ? (
          <p className="text-sm text-zinc-500 dark:text-zinc-400">
            {units.length > 0
              ? "No unit matches the filter."
              : hostState === "connected"
                ? "This agent manages no units. Set GPUDECK_UNITS on the agent (e.g. vllm-*.service)."
                : "No units known yet: the panel has not reached this host's agent."}
          </p>
        ) : (
          <UnitList units={listed} showHost={false} gpu={h.gpu} nowMs={now} />
        )}
      </section>
    </div>
  );
}
