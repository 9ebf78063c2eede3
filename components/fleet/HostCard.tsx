"use client";
/**
 * One host on the fleet overview: its connection (since when, the error when down), its agent,
 * its units by state and its GPUs, with what exited processes still hold. The name opens the
 * host's page.
 */
import Link from "next/link";
import type { ReactNode } from "react";
import type { HostSummary } from "@/server/contract/fleet";
import { HostStateBadge } from "./HostStateBadge";
import { agentText, exitedText, gpuTotalsText, hostStateText, unitCountList, unitTotal } from "./hostText";
import { hostGpusHref, hostHref } from "./links";

const COUNT_TONE: Record<string, string> = {
  failed: "text-red-800 dark:text-red-300 font-semibold",
  activating: "text-amber-800 dark:text-amber-300",
  deactivating: "text-amber-800 dark:text-amber-300",
};

export function HostCard({
  host,
  nowMs,
  toggle,
  className = "",
  children,
}: {
  host: HostSummary;
  nowMs: number;
  /** the fold button, beside the name (the fleet overview) */
  toggle?: ReactNode;
  className?: string;
  /** below the card's facts: the host's units */
  children?: ReactNode;
}) {
  const counts = unitCountList(host.unitCounts);
  const exited = exitedText(host.gpuTotals);
  const agent = agentText(host);
  return (
    <li
      data-testid="host-card"
      data-host={host.name}
      data-state={host.state}
      data-folded="false"
      className={`min-w-0 space-y-1 rounded-lg border p-3 text-sm ${host.state === "down" ? "border-red-300 dark:border-red-800" : "border-zinc-200 dark:border-zinc-800"} ${className}`}
    >
      <div className="flex flex-wrap items-center gap-2">
        {toggle}
        <h3 className="min-w-0 break-all font-mono text-base font-semibold">
          <Link href={hostHref(host.name)} className="underline-offset-2 hover:underline">
            {host.name}
          </Link>
        </h3>
        <HostStateBadge state={host.state} />
      </div>
      <p className="tabular-nums text-zinc-600 dark:text-zinc-400" data-testid="host-since">
        {hostStateText(host, nowMs)}
      </p>
      {host.error && (
        <p className="break-words text-red-800 dark:text-red-300" data-testid="host-error">
          {host.error}
        </p>
      )}
      {agent && <p className="text-xs text-zinc-500 dark:text-zinc-400">{agent}</p>}
      <p data-testid="host-unit-counts">
        {counts.length === 0 ? (
          <span className="text-zinc-500 dark:text-zinc-400">no units</span>
        ) : (
          <>
            <span className="sr-only">{unitTotal(host.unitCounts)} units: </span>
            {counts.map(([state, n], i) => (
              <span key={state} className={COUNT_TONE[state] ?? ""}>
                {i > 0 && <span className="text-zinc-400"> · </span>}
                {n} {state}
              </span>
            ))}
          </>
        )}
        {host.state !== "connected" && counts.length > 0 && <span className="text-zinc-500 dark:text-zinc-400"> (last known)</span>}
      </p>
      <p>
        <Link href={hostGpusHref(host.name)} className="tabular-nums underline-offset-2 hover:underline" data-testid="host-gpus">
          {gpuTotalsText(host.gpuTotals)}
        </Link>
        {exited && (
          <span className="block text-fuchsia-800 dark:text-fuchsia-300" data-testid="host-exited">
            {exited}
          </span>
        )}
      </p>
      {children}
    </li>
  );
}
