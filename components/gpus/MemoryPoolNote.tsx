/** On a unified-memory host (GB10 / DGX Spark): its GPUs share system memory; the pool they allocate from, from /proc/meminfo. */
import type { MemoryPool } from "@/server/contract/types";
import { memoryPoolText } from "./gpuHealthText";

export function MemoryPoolNote({ pool }: { pool: MemoryPool | undefined }) {
  if (!pool) return null;
  const usedFraction = pool.totalMiB > 0 ? Math.min(1, Math.max(0, (pool.totalMiB - pool.availableMiB) / pool.totalMiB)) : 0;
  return (
    <div
      role="note"
      className="space-y-1 rounded-md border border-sky-300 bg-sky-50 px-3 py-2 text-sm text-sky-950 dark:border-sky-800 dark:bg-sky-950 dark:text-sky-100"
      data-testid="memory-pool"
    >
      <p className="tabular-nums">{memoryPoolText(pool)}.</p>
      <div aria-hidden="true" className="h-2 w-full overflow-hidden rounded bg-white/70 dark:bg-zinc-900">
        <div className="h-full bg-sky-700" style={{ width: `${(usedFraction * 100).toFixed(1)}%` }} />
      </div>
      <p className="text-xs">
        These GPUs report no memory total or use of their own: what a process holds is its share of the host&apos;s memory (MemAvailable in /proc/meminfo).
      </p>
    </div>
  );
}
