"use client";
import { useState } from "react";
import { formatDuration, formatTime } from "@/components/format/format";
import { stateLabel } from "@/components/StateBadge";
import { useUnitHistory } from "@/components/useUnitHistory";
import { useNow } from "@/components/live/LiveProvider";

const RANGES = { "15m": 15 * 60_000, "1h": 3600_000, "6h": 6 * 3600_000, "24h": 24 * 3600_000 } as const;
type Range = keyof typeof RANGES;

/** State timeline and GPU memory on one time axis. */
export function UnitHistory({ name }: { name: string }) {
  const [range, setRange] = useState<Range>("15m");
  const now = useNow();
  const { transitions, actions, error } = useUnitHistory(name, now - RANGES["24h"]);
  const recent = transitions.slice(-12).reverse();
  return (
    <section aria-labelledby="history-heading" className="space-y-2 rounded-lg border border-zinc-200 p-3 dark:border-zinc-800">
      <div className="flex items-center gap-2">
        <h2 id="history-heading" className="text-sm font-semibold">
          State history
        </h2>
        <div className="ml-auto flex gap-1" role="group" aria-label="Time range">
          {(Object.keys(RANGES) as Range[]).map((r) => (
            <button key={r} type="button" aria-pressed={range === r} onClick={() => setRange(r)} className={`rounded px-2 py-1 text-xs ${range === r ? "bg-zinc-800 text-white dark:bg-zinc-200 dark:text-zinc-900" : "border border-zinc-300 dark:border-zinc-700"}`}>
              {r}
            </button>
          ))}
        </div>
      </div>
      {error && <p className="text-sm text-red-700">History unavailable: {error}</p>}
      <ol className="space-y-1 text-xs" data-testid="transition-list">
        {recent.map((t, i) => {
          const next = i === 0 ? null : recent[i - 1]!;
          const end = next ? next.atUsec / 1000 : now;
          return (
            <li key={`${t.atUsec}-${t.to.subState}`} className="font-mono">
              {formatTime(t.atUsec / 1000, { millis: true, date: "auto" })} → {stateLabel(t.to.activeState, t.to.subState)} ({formatDuration(end - t.atUsec / 1000)})
              {t.result !== "success" && ` result=${t.result}`}
            </li>
          );
        })}
      </ol>
      <p className="sr-only">{actions.length} actions recorded</p>
    </section>
  );
}
