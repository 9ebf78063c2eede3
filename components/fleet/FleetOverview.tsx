"use client";
/**
 * `/`: the fleet at a glance (./fleetView.ts). First what needs someone: units failed, looping,
 * stuck or not serving on any host, and hosts down or holding GPU memory for exited processes.
 * Then every host: those with something going on open with their units, healthy ones folded to
 * one line each. A filter (text, state, host; kept in the URL, so back/forward and a reload keep
 * it) turns the page into one list of the matching units, failed first. Long lists are
 * virtualized (./VirtualUnitList.tsx).
 */
import Link from "next/link";
import { useState } from "react";
import { useLive, useNow } from "@/components/live/LiveProvider";
import { plural } from "@/server/contract/format";
import { FleetHosts } from "./FleetHosts";
import { fleetView, type HostGroup } from "./fleetView";
import { hostHref } from "./links";
import { UnitFilters } from "./UnitFilters";
import type { ListedUnit } from "./UnitList";
import { useUnitFilter } from "./useUnitFilter";
import { VirtualUnitList } from "./VirtualUnitList";

const muted = "text-sm text-zinc-500 dark:text-zinc-400";

export function FleetOverview() {
  const live = useLive();
  const now = useNow();
  const { filter, setText, setParam, searchRef } = useUnitFilter();
  // hosts folded or unfolded by hand, against what the view chose
  const [toggled, setToggled] = useState<ReadonlyMap<string, boolean>>(new Map());
  const [toggledLast, setToggledLast] = useState<string | null>(null);
  const hosts = live.summaries();
  const all = live.allUnits();
  const view = fleetView(hosts, all, filter, now);

  const stateOf = new Map(hosts.map((s) => [s.name, s.state]));
  const listed = (units: typeof all): ListedUnit[] => units.map(({ host, ...unit }) => ({ host, hostState: stateOf.get(host) ?? "connecting", unit }));
  const down = hosts.filter((h) => h.state === "down").length;
  const folded = view.hosts.filter((g) => g.folded).length;
  const isOpen = (g: HostGroup) => toggled.get(g.name) ?? !g.folded;
  const onToggle = (g: HostGroup) => {
    setToggled((m) => new Map(m).set(g.name, !isOpen(g)));
    setToggledLast(g.name);
  };
  const listedAbove = new Set(view.attentionUnits.map((u) => `${u.host}\n${u.name}`));
  const attention = view.attentionUnits.length;

  const emptyText =
    live.connection !== "live" && all.length === 0
      ? "Connecting to the panel…"
      : all.length > 0
        ? null
        : hosts.some((h) => h.state === "connecting")
          ? "Waiting for the hosts' agents…"
          : "No host reports any unit. Set GPUDECK_UNITS on the agents (e.g. vllm-*.service).";

  return (
    <div className="flex flex-col gap-6">
      <div className="flex flex-wrap items-end gap-3">
        <h1 className="text-lg font-semibold">Fleet</h1>
        {hosts.length > 0 && (
          <p className={muted} data-testid="fleet-counts">
            {plural(hosts.length, "host")}
            {down > 0 && <span className="font-semibold text-red-800 dark:text-red-300"> · {down} down</span>}
            {folded > 0 && !view.filtered && <> · {folded} healthy, folded</>}
          </p>
        )}
        <UnitFilters filter={filter} hosts={hosts.map((h) => h.name)} searchRef={searchRef} onText={setText} onParam={setParam} />
      </div>

      {view.filtered ? (
        <section aria-labelledby="units-heading" className="space-y-3">
          <h2 id="units-heading" className="text-lg font-semibold">
            Units matching the filter
          </h2>
          {view.matching.length === 0 ? (
            <p className={muted}>{emptyText ?? "No unit matches the filter."}</p>
          ) : (
            <VirtualUnitList units={listed(view.matching)} showHost nowMs={now} label="Units matching the filter" />
          )}
        </section>
      ) : (
        <>
          <section aria-labelledby="attention-heading" className="space-y-3" data-testid="attention">
            <div className="flex flex-wrap items-baseline gap-3">
              <h2 id="attention-heading" className="text-lg font-semibold">
                Needs attention
              </h2>
              {attention > 0 && (
                <p className="text-sm font-semibold text-red-800 dark:text-red-300" data-testid="attention-count">
                  {attention} need attention
                </p>
              )}
            </div>
            {view.attentionHosts.length > 0 && (
              <ul className="space-y-1 text-sm" data-testid="attention-hosts">
                {view.attentionHosts.map((a) => (
                  <li key={`${a.name}\n${a.what}`} data-host={a.name}>
                    <Link href={hostHref(a.name)} className="font-mono font-semibold underline-offset-2 hover:underline">
                      {a.name}
                    </Link>{" "}
                    <span className={a.what === "down" ? "font-semibold text-red-800 dark:text-red-300" : "text-fuchsia-800 dark:text-fuchsia-300"}>
                      {a.what}
                    </span>
                  </li>
                ))}
              </ul>
            )}
            {attention > 0 ? (
              <VirtualUnitList units={listed(view.attentionUnits)} showHost nowMs={now} label="Units that need attention" />
            ) : (
              view.attentionHosts.length === 0 && <p className={muted}>{emptyText ?? "Nothing: every unit is running or stopped as it should be."}</p>
            )}
          </section>

          <section aria-labelledby="hosts-heading" className="space-y-2">
            <h2 id="hosts-heading" className="text-lg font-semibold">
              Hosts
            </h2>
            {hosts.length === 0 ? (
              <p className={muted}>
                {live.connection === "live" ? (
                  <>
                    No hosts yet. Name agents in GPUDECK_AGENTS_FILE, or add one on the{" "}
                    <Link href="/hosts" className="underline">
                      Hosts page
                    </Link>
                    .
                  </>
                ) : (
                  "Connecting…"
                )}
              </p>
            ) : (
              <FleetHosts groups={view.hosts} listedAbove={listedAbove} isOpen={isOpen} onToggle={onToggle} toggledLast={toggledLast} nowMs={now} />
            )}
          </section>
        </>
      )}
    </div>
  );
}
