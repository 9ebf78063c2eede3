"use client";
import { formatDuration } from "@/server/contract/format";
import { useLive, useNow } from "@/components/live/LiveProvider";

const LOOK = {
  connecting: { dot: "bg-zinc-400", text: "connecting" },
  live: { dot: "bg-emerald-500", text: "live" },
  reconnecting: { dot: "bg-amber-500 animate-pulse", text: "reconnecting" },
  stale: { dot: "bg-red-600", text: "stale" },
} as const;

/** live / reconnecting / stale, plus the host and backend problems worth a glance. */
export function ConnectionIndicator() {
  const live = useLive();
  const now = useNow();
  const look = LOOK[live.connection];
  const problems = [
    live.systemd && live.systemd.state !== "ok" ? `systemd ${live.systemd.state}: ${live.systemd.message}` : null,
    live.telemetry && live.telemetry.state !== "ok" ? `GPU telemetry ${live.telemetry.state}: ${live.telemetry.message}` : null,
  ].filter(Boolean);
  const age = live.lastEventAtMs ? formatDuration(now - live.lastEventAtMs) : "never";
  return (
    <span className="flex items-center gap-3 text-xs">
      {problems.length > 0 && (
        <span className="max-w-[40vw] truncate text-red-700 dark:text-red-400" title={problems.join("\n")} data-testid="backend-problem">
          ⚠ {problems[0]}
        </span>
      )}
      {live.host && <span className="hidden font-mono text-zinc-500 sm:inline">{live.host}</span>}
      <span
        role="status"
        aria-live="polite"
        data-testid="connection"
        data-state={live.connection}
        title={`last event ${age} ago`}
        className="flex items-center gap-1.5"
      >
        <span aria-hidden="true" className={`h-2.5 w-2.5 rounded-full ${look.dot}`} />
        {look.text}
      </span>
    </span>
  );
}
