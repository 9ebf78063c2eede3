"use client";
/**
 * `/`: the fleet at a glance. Every host's connection, units by state and GPU memory; below,
 * one list of every unit of every host, failed and stuck first whichever host they are on,
 * filtered by host, state and text (kept in the URL). On a phone the units come first.
 */
import Link from "next/link";
import { useLive, useNow } from "@/components/live/LiveProvider";
import { plural } from "@/server/contract/format";
import { HostCard } from "./HostCard";
import { matchesUnitFilter } from "./unitFilter";
import { UnitFilters } from "./UnitFilters";
import { UnitList, type ListedUnit } from "./UnitList";
import { needsAttention, sortUnits } from "./unitOrder";
import { useUnitFilter } from "./useUnitFilter";

export function FleetOverview() {
  const live = useLive();
  const now = useNow();
  const { filter, setText, setParam, searchRef } = useUnitFilter();
  const hosts = live.summaries();
  const all = live.allUnits();

  // a few hundred units at most, re-sorted each second: stuck is a matter of time
  const stateOf = new Map(hosts.map((s) => [s.name, s.state]));
  const listed: ListedUnit[] = sortUnits(
    all.filter((u) => matchesUnitFilter(u, filter, now)),
    now,
  ).map(({ host, ...unit }) => ({ host, hostState: stateOf.get(host) ?? "connecting", unit }));
  const attention = all.filter((u) => needsAttention(u, now)).length;
  const down = hosts.filter((h) => h.state === "down").length;

  return (
    <div className="flex flex-col gap-6">
      <section aria-labelledby="hosts-heading" className="order-2 space-y-2 sm:order-1">
        <div className="flex flex-wrap items-baseline gap-x-3">
          <h2 id="hosts-heading" className="text-lg font-semibold">
            Hosts
          </h2>
          {hosts.length > 0 && (
            <p className="text-sm text-zinc-500 dark:text-zinc-400">
              {plural(hosts.length, "host")}
              {down > 0 && <span className="font-semibold text-red-800 dark:text-red-300"> · {down} down</span>}
            </p>
          )}
        </div>
        {hosts.length === 0 ? (
          <p className="text-sm text-zinc-500 dark:text-zinc-400">
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
          <ul className="grid grid-cols-1 gap-3 sm:grid-cols-2 lg:grid-cols-3" data-testid="host-list">
            {hosts.map((h) => (
              <HostCard key={h.name} host={h} nowMs={now} />
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="units-heading" className="order-1 space-y-3 sm:order-2">
        <div className="flex flex-wrap items-end gap-3">
          <h2 id="units-heading" className="text-lg font-semibold">
            Units
          </h2>
          {attention > 0 && (
            <p className="text-sm font-semibold text-red-800 dark:text-red-300" data-testid="attention-count">
              {attention} need attention
            </p>
          )}
          <UnitFilters filter={filter} hosts={hosts.map((h) => h.name)} searchRef={searchRef} onText={setText} onParam={setParam} />
        </div>
        {/* on a phone the hosts come after the units: say here which are down */}
        {down > 0 && (
          <p className="text-sm sm:hidden">
            <a href="#hosts-heading" className="font-semibold text-red-800 underline dark:text-red-300">
              {plural(down, "host")} down:{" "}
              {hosts
                .filter((h) => h.state === "down")
                .map((h) => h.name)
                .join(", ")}
            </a>
          </p>
        )}
        {live.connection !== "live" && all.length === 0 ? (
          <p className="text-sm text-zinc-500 dark:text-zinc-400">Connecting to the panel…</p>
        ) : listed.length === 0 ? (
          <p className="text-sm text-zinc-500 dark:text-zinc-400">
            {all.length > 0
              ? "No unit matches the filter."
              : hosts.some((h) => h.state === "connecting")
                ? "Waiting for the hosts' agents…"
                : "No host reports any unit. Set GPUDECK_UNITS on the agents (e.g. vllm-*.service)."}
          </p>
        ) : (
          <UnitList units={listed} showHost nowMs={now} />
        )}
      </section>
    </div>
  );
}
