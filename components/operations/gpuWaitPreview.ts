/**
 * What "restart when its GPUs are free" will wait for, from the latest GPU sample: per GPU, the
 * memory the unit's processes (live, or exited and still draining) hold, and their PIDs. The
 * dialog offers the GPU-aware restart only when there is something to wait for.
 */
import { formatMiB } from "@/server/contract/format";
import type { GpuSample } from "@/server/contract/types";

export interface GpuWaitItem {
  uuid: string;
  index: number | null;
  /** what the reported holders use; unknown ones ([N/A]) are left out and counted in `unknownPids` */
  heldMiB: number;
  pids: number[];
  exitedPids: number[];
  /** holders whose memory nvidia-smi did not report: never shown as 0 */
  unknownPids: number[];
}

export function gpuWaitPreview(sample: GpuSample | null, unit: string): GpuWaitItem[] {
  if (!sample) return [];
  const out: GpuWaitItem[] = [];
  for (const g of sample.gpus) {
    const item: GpuWaitItem = { uuid: g.uuid, index: g.index, heldMiB: 0, pids: [], exitedPids: [], unknownPids: [] };
    for (const h of g.holders) {
      if (h.unit !== unit || (h.kind !== "unit" && h.kind !== "exited")) continue;
      (h.kind === "exited" ? item.exitedPids : item.pids).push(h.pid);
      if (h.usedMiBUnknown) item.unknownPids.push(h.pid);
      else item.heldMiB += h.usedMiB;
    }
    if (item.pids.length + item.exitedPids.length > 0) out.push(item);
  }
  return out.sort((a, b) => (a.index ?? Infinity) - (b.index ?? Infinity));
}

/** "GPU 3: 75.0 GiB by PID 4821 · exited 4820" */
export function gpuWaitLine(w: GpuWaitItem): string {
  const held = w.unknownPids.length > 0 ? `${w.heldMiB > 0 ? `${formatMiB(w.heldMiB)} + ` : ""}an amount not reported` : formatMiB(w.heldMiB);
  const by = [
    w.pids.length > 0 ? `${w.pids.length === 1 ? "PID" : "PIDs"} ${w.pids.join(", ")}` : null,
    w.exitedPids.length > 0 ? `exited ${w.exitedPids.join(", ")}` : null,
  ]
    .filter(Boolean)
    .join(" · ");
  return `GPU ${w.index ?? w.uuid}: ${held} by ${by}`;
}

/** Total of what is reported; null when some of it is not. */
export function gpuWaitTotalMiB(items: readonly GpuWaitItem[]): number | null {
  if (items.some((w) => w.unknownPids.length > 0)) return null;
  return items.reduce((sum, w) => sum + w.heldMiB, 0);
}
