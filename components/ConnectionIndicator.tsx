"use client";
import { formatDuration } from "@/server/contract/format";
import { useLive, useNow } from "@/components/live/LiveProvider";
import { indicatorOf, type IndicatorState } from "@/components/live/indicator";

const DOT: Record<IndicatorState, string> = {
  connecting: "bg-zinc-400",
  live: "bg-emerald-500",
  reconnecting: "bg-amber-500 animate-pulse",
  stale: "bg-red-600",
  "host-connecting": "bg-amber-500 animate-pulse",
  "host-down": "bg-red-600",
};

/** live / reconnecting / stale (or the watched host's trouble), plus the problems worth a glance; nothing where the page watches nothing. */
export function ConnectionIndicator() {
  const live = useLive();
  const now = useNow();
  const indicator = indicatorOf(live);
  if (!indicator) return null;
  const age = live.lastEventAtMs ? formatDuration(now - live.lastEventAtMs) : "never";
  const { problems } = indicator;
  return (
    <span className="flex min-w-0 items-center gap-3 text-xs">
      {problems.length > 0 && (
        <span className="hidden max-w-[40vw] truncate text-red-700 sm:inline dark:text-red-400" title={problems.join("\n")} data-testid="backend-problem">
          ⚠ {problems.join(" · ")}
        </span>
      )}
      {indicator.host && indicator.state === "live" && <span className="hidden font-mono text-zinc-500 dark:text-zinc-400 sm:inline">{indicator.host}</span>}
      {/* a host in trouble is named beside its state (on a phone the page's own banner names it) */}
      <span
        role="status"
        aria-live="polite"
        data-testid="connection"
        data-state={indicator.state}
        title={`last event ${age} ago`}
        className="flex items-center gap-1.5 whitespace-nowrap"
      >
        <span aria-hidden="true" className={`h-2.5 w-2.5 rounded-full ${DOT[indicator.state]}`} />
        {indicator.host && indicator.state !== "live" && indicator.state.startsWith("host-") && (
          <span className="hidden font-mono sm:inline">{indicator.host}</span>
        )}
        {indicator.text}
      </span>
    </span>
  );
}
