"use client";
/**
 * Said on every page of a host that is not connected: since when, why, and that what the page
 * shows is the last known state, not live. Nothing while it is connected.
 */
import { useLive, useNow } from "@/components/live/LiveProvider";
import { hostStateText } from "./hostText";

export function HostNotLive({ host }: { host: string }) {
  const live = useLive();
  const now = useNow();
  const summary = live.host(host)?.summary;
  if (!summary || summary.state === "connected") return null;
  const down = summary.state === "down";
  return (
    <div
      role="status"
      data-testid="host-not-live"
      data-state={summary.state}
      className={`rounded-md border px-3 py-2 text-sm ${down ? "border-red-300 bg-red-50 text-red-950 dark:border-red-800 dark:bg-red-950 dark:text-red-100" : "border-amber-300 bg-amber-50 text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100"}`}
    >
      <p className="font-semibold">
        <span className="font-mono">{host}</span> is {hostStateText(summary, now)}
      </p>
      {summary.error && <p className="break-words">{summary.error}</p>}
      <p>What you see is its last known state, not live.</p>
    </div>
  );
}
