"use client";
/** The body of an action's confirm dialog: what the unit is doing now and what clients lose. */
import { useNow } from "@/components/live/LiveProvider";
import { stateLabel } from "@/components/StateBadge";
import { miBText } from "@/components/gpu-chart/strip";
import { gpuList, type UnitGpuUse } from "@/components/unitGpu";
import { formatDuration, formatMiB } from "@/server/contract/format";
import type { UnitAction, UnitSummary } from "@/server/contract/types";
import type { RecentAction } from "./unitActions";

export function ActionConsequences({
  action,
  name,
  unit,
  activeEnterUsec,
  gpu,
  recentRepeat,
}: {
  action: UnitAction;
  name: string;
  unit: UnitSummary;
  /** when the unit last became active (from `units.get`), for "has been up for" */
  activeEnterUsec: number | undefined;
  gpu: UnitGpuUse;
  /** someone else's recent restart/stop this would repeat; shown (as an alert) only while the dialog is open */
  recentRepeat: RecentAction | null;
}) {
  const now = useNow();
  const uptime = unit.activeState === "active" && activeEnterUsec ? now - activeEnterUsec / 1000 : null;
  return (
    <>
      {recentRepeat && (
        <p
          role="alert"
          className="rounded-md border border-amber-400 bg-amber-50 px-3 py-2 font-medium text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
        >
          {recentRepeat.user} already did {recentRepeat.action} on this unit {formatDuration(now - recentRepeat.atMs)} ago. Confirm only if it must happen
          again.
        </p>
      )}
      <p>
        <b className="font-mono">{name}</b> is {stateLabel(unit.activeState, unit.subState)}
        {uptime !== null && <> and has been up for {formatDuration(uptime)}</>}.
      </p>
      {gpu.indexes.length > 0 && (gpu.usedMiB > 0 || gpu.unknown) ? (
        <p>
          It holds {miBText({ miB: gpu.usedMiB, unknown: gpu.unknown })} of GPU memory on GPU {gpuList(gpu.indexes)}
          {gpu.exitedMiB > 0 && <>, and its exited processes still hold {formatMiB(gpu.exitedMiB)}</>}. Clients lose it until it is back; a large model can take
          minutes to load, and freed GPU memory can take tens of seconds to drain.
        </p>
      ) : gpu.exitedMiB > 0 ? (
        <p>
          Its exited processes still hold {formatMiB(gpu.exitedMiB)} of GPU memory on GPU {gpuList(gpu.indexes)}, draining: a start now may find its GPUs still
          full.
        </p>
      ) : (
        <p>It holds no GPU memory right now.</p>
      )}
      {action === "kill" && <p className="font-semibold text-red-700 dark:text-red-400">SIGKILL gives the process no chance to clean up.</p>}
    </>
  );
}
