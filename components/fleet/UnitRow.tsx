"use client";
/**
 * One unit in a unit list: its host (on the fleet overview), name, description, state as text,
 * whether its engine serves, time in that state, restarts (a crash-loop badge when it loops), job
 * and GPU memory, and why it is not running. A unit of a host that is not connected shows its
 * last known state, marked as not live in words.
 */
import Link from "next/link";
import { CrashLoopBadge } from "@/components/crash-loop/CrashLoopBadge";
import { DiagnosisReason } from "@/components/DiagnosisCard";
import { miBText } from "@/components/gpu-chart/strip";
import { ReadinessLine } from "@/components/readiness/ReadinessLine";
import { StateBadge } from "@/components/StateBadge";
import { gpuList, type UnitGpuUse } from "@/components/unitGpu";
import type { HostState } from "@/server/contract/fleet";
import { formatDuration, formatMiB } from "@/server/contract/format";
import type { UnitSummary } from "@/server/contract/types";
import { hostUnitHref } from "./links";
import { timeInStateMs } from "./unitOrder";

export function UnitRow({
  host,
  hostState,
  unit: u,
  showHost,
  gpu,
  nowMs,
  index,
  setSize,
  measureRef,
}: {
  host: string;
  hostState: HostState;
  unit: UnitSummary;
  showHost: boolean;
  /** what it holds on the GPUs; unknown on the fleet overview (no GPU samples there) */
  gpu: UnitGpuUse | null;
  nowMs: number;
  /** in a virtualized list (./VirtualUnitList.tsx): its place in the whole list, and how long that is */
  index?: number;
  setSize?: number;
  measureRef?: (el: HTMLLIElement | null) => void;
}) {
  const live = hostState === "connected";
  return (
    <li
      ref={measureRef}
      data-index={index}
      aria-posinset={index === undefined ? undefined : index + 1}
      aria-setsize={setSize}
      data-testid="unit-row"
      data-unit={u.name}
      data-host={host}
      data-live={live}
      data-readiness={u.readiness?.state ?? "unknown"}
      className={live ? "" : "bg-zinc-50 dark:bg-zinc-900/60"}
    >
      <Link
        href={hostUnitHref(host, u.name)}
        className="flex flex-col gap-1 px-4 py-3 hover:bg-zinc-50 focus-visible:bg-zinc-50 sm:flex-row sm:items-center sm:gap-4 dark:hover:bg-zinc-900 dark:focus-visible:bg-zinc-900"
      >
        {showHost && (
          <span className="shrink-0 font-mono text-xs text-zinc-600 sm:w-28 sm:truncate dark:text-zinc-400" data-testid="unit-host" title={host}>
            <span className="sr-only">host </span>
            {host}
          </span>
        )}
        <span className="min-w-0 flex-1">
          <span className="block truncate font-mono text-sm font-medium">{u.name}</span>
          <span className="block truncate text-xs text-zinc-500 dark:text-zinc-400">{u.description}</span>
          {!(u.activeState === "active" && u.subState === "running") && <DiagnosisReason host={host} name={u.name} enabled={live} />}
        </span>
        <span className={`flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-zinc-600 dark:text-zinc-400 ${live ? "" : "opacity-90"}`}>
          <StateBadge active={u.activeState} sub={u.subState} />
          <ReadinessLine readiness={u.readiness} nowMs={nowMs} />
          <CrashLoopBadge crashLoop={u.crashLoop} />
          {!live && (
            <span className="font-semibold text-zinc-700 dark:text-zinc-300" data-testid="not-live">
              not live: host {hostState}, last known state
            </span>
          )}
          <span title="time in this state" className="tabular-nums">
            for {formatDuration(timeInStateMs(u, nowMs))}
          </span>
          {u.nRestarts > 0 && !u.crashLoop && <span>{u.nRestarts} restarts</span>}
          {u.result !== "success" && u.activeState === "failed" && <span>result: {u.result}</span>}
          {u.job && <span>job: {u.job.type}</span>}
          {gpu && gpu.indexes.length > 0 && (
            <span>
              GPU {gpuList(gpu.indexes)} · {miBText({ miB: gpu.usedMiB + gpu.exitedMiB, unknown: gpu.unknown })}
              {gpu.exitedMiB > 0 && ` (${formatMiB(gpu.exitedMiB)} held by exited processes)`}
            </span>
          )}
        </span>
      </Link>
    </li>
  );
}
