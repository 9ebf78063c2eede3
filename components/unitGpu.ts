/** What a unit holds on the GPUs, from the latest attributed sample. */
import type { GpuSample } from "@/server/contract/types";

export interface UnitGpuUse {
  indexes: number[];
  usedMiB: number;
  /** memory of this unit's exited processes that is still held */
  exitedMiB: number;
  /** some of its processes' memory was not reported ([N/A]): the sums are lower bounds */
  unknown?: boolean;
}

export function unitGpuUse(sample: GpuSample | null, unit: string): UnitGpuUse {
  const out: UnitGpuUse = { indexes: [], usedMiB: 0, exitedMiB: 0 };
  if (!sample) return out;
  for (const g of sample.gpus) {
    let here = false;
    for (const h of g.holders) {
      if (h.unit !== unit) continue;
      if (h.usedMiBUnknown) out.unknown = true;
      if (h.kind === "exited") out.exitedMiB += h.usedMiB;
      else out.usedMiB += h.usedMiB;
      here = true;
    }
    if (here && g.index !== null) out.indexes.push(g.index);
  }
  return out;
}

/** "0–7", "0, 2, 5" */
export { formatIndexList as gpuList } from "@/server/contract/format";
