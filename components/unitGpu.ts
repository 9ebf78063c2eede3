/** What a unit holds on the GPUs, from the latest attributed sample. */
import type { GpuSample } from "@/server/agent/types";

export interface UnitGpuUse {
  indexes: number[];
  usedMiB: number;
  /** memory of this unit's exited processes that is still held */
  exitedMiB: number;
}

export function unitGpuUse(sample: GpuSample | null, unit: string): UnitGpuUse {
  const out: UnitGpuUse = { indexes: [], usedMiB: 0, exitedMiB: 0 };
  if (!sample) return out;
  for (const g of sample.gpus) {
    let here = false;
    for (const h of g.holders) {
      if (h.unit !== unit) continue;
      if (h.kind === "exited") out.exitedMiB += h.usedMiB;
      else out.usedMiB += h.usedMiB;
      here = true;
    }
    if (here && g.index !== null) out.indexes.push(g.index);
  }
  return out;
}

/** "0–7", "0, 2, 5" */
export function gpuList(indexes: number[]): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j - i >= 2 ? `${sorted[i]}–${sorted[j]}` : sorted.slice(i, j + 1).join(", "));
    i = j + 1;
  }
  return parts.join(", ");
}
