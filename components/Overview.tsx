"use client";
import Link from "next/link";
import { usePathname, useSearchParams } from "next/navigation";
import { useEffect, useMemo, useRef, useState } from "react";
import { formatDuration, formatMiB } from "@/server/contract/format";
import { useLive, useNow } from "@/components/live/LiveProvider";
import { DiagnosisReason } from "@/components/DiagnosisCard";
import { GpuStrip } from "@/components/gpu-chart/GpuStrip";
import { StateBadge } from "@/components/StateBadge";
import { gpuList, unitGpuUse } from "@/components/unitGpu";
import { replaceSearch } from "@/components/urlState";
import type { UnitSummary } from "@/server/contract/types";

const STATE_FILTERS = ["all", "failed", "changing", "active", "inactive"] as const;
type StateFilter = (typeof STATE_FILTERS)[number];

/** failed first, then units in transition, then running, then stopped */
export function unitRank(u: UnitSummary): number {
  if (u.activeState === "failed") return 0;
  if (u.activeState === "activating" || u.activeState === "deactivating" || u.activeState === "reloading") return 1;
  if (u.activeState === "active") return 2;
  return 3;
}

function matchesState(u: UnitSummary, f: StateFilter): boolean {
  return f === "all" || ["failed", "changing", "active", "inactive"][unitRank(u)] === f;
}

export function Overview() {
  const live = useLive();
  const now = useNow();
  const params = useSearchParams();
  const pathname = usePathname();
  const urlQ = params.get("q") ?? "";
  // the text box echoes typing at once; the URL follows (and a URL change, e.g. back, wins)
  const [q, setQ] = useState(urlQ);
  const [seenUrlQ, setSeenUrlQ] = useState(urlQ);
  if (seenUrlQ !== urlQ) {
    setSeenUrlQ(urlQ);
    setQ(urlQ);
  }
  const stateParam = params.get("state") as StateFilter | null;
  const state: StateFilter = stateParam && STATE_FILTERS.includes(stateParam) ? stateParam : "all";

  const setParam = (key: string, value: string) => {
    const next = new URLSearchParams(params.toString());
    if (value && value !== "all") next.set(key, value);
    else next.delete(key);
    replaceSearch(pathname, next);
  };
  const setText = (value: string) => {
    setQ(value);
    setParam("q", value);
  };

  // text typed before the page became interactive (a slow phone) is not lost
  const search = useRef<HTMLInputElement>(null);
  useEffect(() => {
    const typed = search.current?.value ?? "";
    if (typed !== urlQ) setText(typed);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- once, on mount
  }, []);

  const units = useMemo(
    () =>
      [...live.units.values()]
        .filter((u) => matchesState(u, state))
        .filter((u) => !q || u.name.toLowerCase().includes(q.toLowerCase()) || u.description.toLowerCase().includes(q.toLowerCase()))
        .sort((a, b) => unitRank(a) - unitRank(b) || a.name.localeCompare(b.name)),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [live.version, q, state],
  );

  return (
    // on a phone the units come first (what on-call needs); on wider screens the GPU strip leads
    <div className="flex flex-col gap-6">
      <section aria-labelledby="gpus-heading" className="order-2 space-y-2 sm:order-1">
        <div className="flex items-baseline gap-3">
          <h2 id="gpus-heading" className="text-lg font-semibold">
            GPU memory
          </h2>
          {live.telemetry && live.telemetry.state !== "ok" && (
            <span className="text-sm font-medium text-red-700 dark:text-red-400">
              telemetry {live.telemetry.state}: {live.telemetry.message}
            </span>
          )}
        </div>
        {live.gpu ? (
          <GpuStrip gpus={live.gpu.gpus} unitHref={(u) => `/units/${encodeURIComponent(u)}`} />
        ) : (
          <p className="text-sm text-zinc-500">No GPU sample yet.</p>
        )}
      </section>
      <section aria-labelledby="units-heading" className="order-1 space-y-3 sm:order-2">
        <div className="flex flex-wrap items-end gap-3">
          <h2 id="units-heading" className="text-lg font-semibold">
            Units
          </h2>
          <label className="ml-auto flex items-center gap-2 text-sm">
            <span className="sr-only">Filter units by name</span>
            <input
              ref={search}
              type="search"
              value={q}
              placeholder="Filter by name…"
              onChange={(e) => setText(e.target.value)}
              className="w-48 rounded-md border border-zinc-300 bg-white px-2 py-1.5 dark:border-zinc-700 dark:bg-zinc-900"
            />
          </label>
          <label className="flex items-center gap-2 text-sm">
            <span className="sr-only">Filter units by state</span>
            <select
              value={state}
              onChange={(e) => setParam("state", e.target.value)}
              className="rounded-md border border-zinc-300 bg-white px-2 py-1.5 dark:border-zinc-700 dark:bg-zinc-900"
            >
              {STATE_FILTERS.map((s) => (
                <option key={s} value={s}>
                  {s === "all" ? "All states" : s === "changing" ? "Starting / stopping" : s[0]!.toUpperCase() + s.slice(1)}
                </option>
              ))}
            </select>
          </label>
        </div>
        {live.connection === "connecting" && live.units.size === 0 ? (
          <p className="text-sm text-zinc-500">Connecting to the agent…</p>
        ) : units.length === 0 ? (
          <p className="text-sm text-zinc-500">
            {live.units.size === 0 ? "This agent manages no units. Set GPUDECK_UNITS on the agent (e.g. vllm-*.service)." : "No unit matches the filter."}
          </p>
        ) : (
          <ul
            className="divide-y divide-zinc-200 overflow-hidden rounded-lg border border-zinc-200 dark:divide-zinc-800 dark:border-zinc-800"
            data-testid="unit-list"
          >
            {units.map((u) => {
              const gpu = unitGpuUse(live.gpu, u.name);
              const since = u.stateChangeUsec ? now - u.stateChangeUsec / 1000 : NaN;
              return (
                <li key={u.name} data-testid="unit-row" data-unit={u.name}>
                  <Link
                    href={`/units/${encodeURIComponent(u.name)}`}
                    className="flex flex-col gap-1 px-4 py-3 hover:bg-zinc-50 focus-visible:bg-zinc-50 sm:flex-row sm:items-center sm:gap-4 dark:hover:bg-zinc-900 dark:focus-visible:bg-zinc-900"
                  >
                    <span className="min-w-0 flex-1">
                      <span className="block truncate font-mono text-sm font-medium">{u.name}</span>
                      <span className="block truncate text-xs text-zinc-500">{u.description}</span>
                      {!(u.activeState === "active" && u.subState === "running") && <DiagnosisReason name={u.name} />}
                    </span>
                    <span className="flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-zinc-600 dark:text-zinc-400">
                      <StateBadge active={u.activeState} sub={u.subState} />
                      <span title="time in this state" className="tabular-nums">
                        for {formatDuration(since)}
                      </span>
                      {u.nRestarts > 0 && <span>{u.nRestarts} restarts</span>}
                      {u.result !== "success" && u.activeState === "failed" && <span>result: {u.result}</span>}
                      {u.job && <span>job: {u.job.type}</span>}
                      {gpu.indexes.length > 0 && (
                        <span>
                          GPU {gpuList(gpu.indexes)} · {formatMiB(gpu.usedMiB + gpu.exitedMiB)}
                          {gpu.exitedMiB > 0 && ` (${formatMiB(gpu.exitedMiB)} held by exited processes)`}
                        </span>
                      )}
                    </span>
                  </Link>
                </li>
              );
            })}
          </ul>
        )}
      </section>
    </div>
  );
}
