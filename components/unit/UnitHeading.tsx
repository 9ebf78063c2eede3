"use client";
/**
 * The top of the unit page: the way back (fleet, host), name, state badge and whether its engine
 * serves, a crash-loop badge while it loops, one line of what it is doing, and what the agent's
 * self-heal did (for an hour after) or why it held back.
 */
import Link from "next/link";
import { CrashLoopBadge } from "@/components/crash-loop/CrashLoopBadge";
import { hostHref } from "@/components/fleet/links";
import { useNow } from "@/components/live/LiveProvider";
import { ReadinessLine } from "@/components/readiness/ReadinessLine";
import { StateBadge, stateLabel } from "@/components/StateBadge";
import { formatDuration } from "@/server/contract/format";
import type { UnitSummary } from "@/server/contract/types";

const linkClass = "text-blue-700 underline-offset-2 hover:underline dark:text-blue-400";

export function UnitHeading({ host, name, unit }: { host: string; name: string; unit: UnitSummary }) {
  const now = useNow();
  const since = unit.stateChangeUsec ? now - unit.stateChangeUsec / 1000 : NaN;
  // A fragment: the header's spacing applies to each of these lines as before.
  return (
    <>
      <nav className="flex flex-wrap gap-x-2 text-sm" aria-label="Breadcrumb">
        <Link href="/" className={linkClass}>
          ← All hosts
        </Link>
        <span aria-hidden="true" className="text-zinc-400">
          /
        </span>
        <Link href={hostHref(host)} className={`font-mono ${linkClass}`} data-testid="unit-host-link">
          {host}
        </Link>
      </nav>
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="min-w-0 break-all font-mono text-xl font-semibold">{name}</h1>
        <StateBadge active={unit.activeState} sub={unit.subState} size="lg" />
        <ReadinessLine readiness={unit.readiness} nowMs={now} className="text-base" />
        <CrashLoopBadge crashLoop={unit.crashLoop} />
      </div>
      <p className="text-sm text-zinc-600 dark:text-zinc-400">
        {unit.description} ·{" "}
        <span className="tabular-nums" data-testid="time-in-state">
          {stateLabel(unit.activeState, unit.subState)} for {formatDuration(since)}
        </span>
        {unit.job && (
          <>
            {" "}
            · job #{unit.job.id} <b>{unit.job.type}</b> running
          </>
        )}
        {unit.nRestarts > 0 && <> · {unit.nRestarts} automatic restarts</>}
        {unit.activeState === "failed" && (
          <>
            {" "}
            · result <b>{unit.result}</b>
          </>
        )}
      </p>
      {unit.selfHeal && (
        <p className="text-sm" data-testid="self-heal" data-state={unit.selfHeal.state}>
          <b>Self-heal:</b> {unit.selfHeal.message} <span className="text-zinc-500 dark:text-zinc-400">({unit.selfHeal.reason})</span>
        </p>
      )}
    </>
  );
}
