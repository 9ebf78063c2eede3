/**
 * What a GPU-aware restart waits for, captured before the stop: the GPUs the unit's last run
 * used and the PIDs that held memory there (its live processes and any exited holders still
 * draining), the memory no live process explained on each of those GPUs at that moment (the
 * baseline the wait measures against), and — on unified-memory hosts — MemAvailable and what
 * the unit's processes held. The latest sample tells, else the most recent one in the chart
 * history that shows the unit on a GPU (a unit that died earlier still names its GPUs). Pure.
 */
import type { ForeignHolder } from "../../contract/operations";
import type { GpuSample } from "../../contract/types";

export interface LastRun {
  gpus: { uuid: string; index: number | null }[];
  pids: Set<number>;
  /** unattributedMiB per GPU in the sample just before the stop */
  baselineMiB: Map<string, number>;
  /** what the unit's processes (live and exited) held on those GPUs at capture */
  heldMiB: number;
  /** unified-memory host: MemAvailable before the stop and what the unit's processes held */
  pool: { availableBeforeMiB: number; expectedFreeMiB: number } | null;
}

/** `latest` first, then history (oldest first, as SampleHistory.since returns it). */
export function captureLastRun(unit: string, latest: GpuSample | null, history: readonly GpuSample[]): LastRun {
  const pids = new Set<number>();
  let gpus: LastRun["gpus"] = [];
  const baselineMiB = new Map<string, number>();
  let expectedFreeMiB = 0;
  if (latest) {
    for (const g of latest.gpus) {
      const own = g.holders.filter((h) => h.unit === unit && (h.kind === "unit" || h.kind === "exited"));
      if (own.length === 0) continue;
      gpus.push({ uuid: g.uuid, index: g.index });
      for (const h of own) {
        pids.add(h.pid);
        expectedFreeMiB += h.usedMiB;
      }
    }
  }
  if (gpus.length === 0) {
    // the unit is not on a GPU now: the GPUs it was last seen on (folded history holders have no PIDs)
    for (let i = history.length - 1; i >= 0 && gpus.length === 0; i--) {
      gpus = history[i]!.gpus.filter((g) => g.holders.some((h) => h.unit === unit && h.usedMiB > 0)).map((g) => ({ uuid: g.uuid, index: g.index }));
    }
  }
  for (const g of latest?.gpus ?? []) baselineMiB.set(g.uuid, g.unattributedMiB);
  const pool = latest?.memoryPool ? { availableBeforeMiB: latest.memoryPool.availableMiB, expectedFreeMiB } : null;
  return { gpus, pids, baselineMiB, heldMiB: Math.round(expectedFreeMiB), pool };
}

/**
 * Live processes outside the unit — in no unit, or in another one — holding memory on the unit's
 * GPUs (any amount, [N/A] included). `startedAtMs` is filled in by the caller from /proc.
 */
export function foreignHolders(unit: string, run: Pick<LastRun, "gpus" | "pids">, sample: GpuSample | null): Omit<ForeignHolder, "startedAtMs">[] {
  if (!sample) return [];
  const mine = new Set(run.gpus.map((g) => g.uuid));
  const out: Omit<ForeignHolder, "startedAtMs">[] = [];
  for (const g of sample.gpus) {
    if (!mine.has(g.uuid)) continue;
    for (const h of g.holders) {
      const foreign = h.kind === "outside" || (h.kind === "unit" && h.unit !== unit && !run.pids.has(h.pid));
      if (!foreign) continue;
      out.push({
        pid: h.pid,
        cmdline: h.cmdline,
        processName: h.processName,
        unit: h.unit,
        gpuUuid: g.uuid,
        gpuIndex: g.index,
        usedMiB: h.usedMiBUnknown ? null : h.usedMiB,
      });
    }
  }
  return out;
}
