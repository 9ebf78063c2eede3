/**
 * When are a unit's GPUs free again? Fed every attributed GPU sample taken after the stop, it
 * says what of the unit's last run still holds memory, per GPU, and whether the wait is over.
 * Pure (no clock, no I/O). The rule, per GPU the last run used:
 *
 *  1. no live process of the last run (its captured PIDs, or anything of the unit) holds memory;
 *  2. no exited holder of the unit is left (attribution shows memory of a dead process as
 *     "exited" until it drains);
 *  3. memory no live process explains has settled: it is back within `toleranceMiB` of its level
 *     before the stop, or it stopped falling (max − min ≤ tolerance over the last `settleMs`,
 *     at least `settleSamples` samples) — memory stuck forever is not waited on until the
 *     timeout, it is reported;
 *  4. unified-memory hosts (memory.used [N/A]): once the processes are gone, MemAvailable has
 *     recovered what they held (within `poolToleranceMiB`), or stopped rising over `settleMs`;
 *  5. both in two consecutive samples, so one stale compute-apps listing cannot end the wait.
 *
 * Live processes outside the unit on its GPUs are reported as `foreign` (the runner refuses to
 * start then); new processes of the unit itself (someone started it meanwhile) as `newPids`.
 */
import type { OperationGpu, OperationMemoryPool } from "../../contract/operations";
import { formatGpus, formatMiBRounded, plural } from "../../contract/format";
import type { GpuSample } from "../../contract/types";
import { foreignHolders, type LastRun } from "./lastRun";

export interface GpuWaitOptions {
  toleranceMiB?: number;
  poolToleranceMiB?: number;
  settleMs?: number;
  settleSamples?: number;
}

export interface GpuWaitStatus {
  ready: boolean;
  gpus: OperationGpu[];
  heldMiB: number;
  pids: number[];
  pool: OperationMemoryPool | null;
  foreign: ReturnType<typeof foreignHolders>;
  newPids: number[];
  /** a GPU of the last run that the latest sample does not list */
  missing: string[];
  message: string;
}

interface Seen {
  atMs: number;
  unexplained: Map<string, number>;
  availableMiB: number | null;
  ready: boolean;
}

export class GpuWait {
  private readonly seen: Seen[] = [];
  private readonly tol: number;
  private readonly poolTol: number;
  private readonly settleMs: number;
  private readonly settleSamples: number;

  constructor(
    private readonly unit: string,
    private readonly run: LastRun,
    opts: GpuWaitOptions = {},
  ) {
    this.tol = opts.toleranceMiB ?? 64;
    this.poolTol = opts.poolToleranceMiB ?? 256;
    this.settleMs = opts.settleMs ?? 3000;
    this.settleSamples = opts.settleSamples ?? 3;
  }

  observe(sample: GpuSample): GpuWaitStatus {
    const byUuid = new Map(sample.gpus.map((g) => [g.uuid, g]));
    const gpus: OperationGpu[] = [];
    const unexplained = new Map<string, number>();
    const missing: string[] = [];
    const newPids = new Set<number>();
    let processesGone = true;
    for (const ref of this.run.gpus) {
      const g = byUuid.get(ref.uuid);
      if (!g) {
        missing.push(ref.uuid);
        gpus.push({ uuid: ref.uuid, index: ref.index, heldMiB: 0, pids: [], exitedPids: [], unexplainedMiB: 0 });
        continue;
      }
      const ownLive = g.holders.filter((h) => h.kind === "unit" && (this.run.pids.has(h.pid) || h.unit === this.unit));
      const ownExited = g.holders.filter((h) => h.kind === "exited" && (this.run.pids.has(h.pid) || h.unit === this.unit));
      for (const h of ownLive) if (!this.run.pids.has(h.pid)) newPids.add(h.pid);
      const extra = g.memoryUsedMiB === null ? 0 : Math.max(0, g.unattributedMiB - (this.run.baselineMiB.get(g.uuid) ?? 0));
      unexplained.set(g.uuid, extra);
      const held = [...ownLive, ...ownExited].reduce((s, h) => s + h.usedMiB, 0) + extra;
      if (ownLive.length + ownExited.length > 0) processesGone = false;
      gpus.push({
        uuid: g.uuid,
        index: g.index,
        heldMiB: Math.round(held),
        pids: uniq(ownLive.map((h) => h.pid)),
        exitedPids: uniq(ownExited.map((h) => h.pid)),
        unexplainedMiB: Math.round(extra),
      });
    }
    const pool = this.poolNow(sample);
    const foreign = foreignHolders(this.unit, this.run, sample);
    const unexplainedSettled = [...unexplained.entries()].every(
      ([uuid, mib]) => mib <= this.tol || this.settled((s) => s.unexplained.get(uuid), sample.atMs, mib),
    );
    const poolSettled = pool === null || this.poolRecovered(pool, sample.atMs);
    const readyNow = processesGone && missing.length === 0 && unexplainedSettled && poolSettled && foreign.length === 0 && newPids.size === 0;
    const previous = this.seen.at(-1);
    this.seen.push({ atMs: sample.atMs, unexplained, availableMiB: sample.memoryPool?.availableMiB ?? null, ready: readyNow });
    if (this.seen.length > 600) this.seen.shift();
    const heldMiB =
      gpus.reduce((s, g) => s + g.heldMiB, 0) + (pool && processesGone ? Math.max(0, pool.availableBeforeMiB + pool.expectedFreeMiB - pool.availableMiB) : 0);
    const pids = uniq(gpus.flatMap((g) => [...g.pids, ...g.exitedPids]));
    const status: GpuWaitStatus = {
      ready: readyNow && previous?.ready === true,
      gpus,
      heldMiB: Math.round(heldMiB),
      pids,
      pool,
      foreign,
      newPids: [...newPids],
      missing,
      message: "",
    };
    status.message = this.describe(status, processesGone, unexplainedSettled);
    return status;
  }

  private poolNow(sample: GpuSample): OperationMemoryPool | null {
    const before = this.run.pool;
    const now = sample.memoryPool;
    if (!before || !now) return null;
    return { totalMiB: now.totalMiB, availableMiB: now.availableMiB, availableBeforeMiB: before.availableBeforeMiB, expectedFreeMiB: before.expectedFreeMiB };
  }

  private poolRecovered(pool: OperationMemoryPool, atMs: number): boolean {
    if (pool.availableMiB >= pool.availableBeforeMiB + pool.expectedFreeMiB - this.poolTol) return true;
    return this.settled((s) => s.availableMiB ?? undefined, atMs, pool.availableMiB, this.poolTol);
  }

  /** The value (now `current`) moved by at most the tolerance over the last settleMs, with enough samples. */
  private settled(value: (s: Seen) => number | undefined, atMs: number, current: number, tol = this.tol): boolean {
    const window = this.seen.filter((s) => s.atMs >= atMs - this.settleMs);
    const values = [...window.map(value), current].filter((v): v is number => v !== undefined);
    const oldest = window[0];
    if (values.length < this.settleSamples || !oldest || atMs - oldest.atMs < this.settleMs * 0.9) return false;
    return Math.max(...values) - Math.min(...values) <= tol;
  }

  private describe(s: GpuWaitStatus, processesGone: boolean, unexplainedSettled: boolean): string {
    const on = formatGpus(this.run.gpus);
    if (this.run.gpus.length === 0) return "Nothing of the unit's last run is known to hold GPU memory.";
    if (s.missing.length > 0) return `Waiting for nvidia-smi to report ${plural(s.missing.length, "GPU")} of the unit's last run again.`;
    if (s.foreign.length > 0) {
      const f = s.foreign[0]!;
      return `PID ${f.pid} (${f.unit ?? "outside any unit"}) holds ${f.usedMiB === null ? "memory ([N/A])" : formatMiBRounded(f.usedMiB)} on ${formatGpus([{ uuid: f.gpuUuid, index: f.gpuIndex }])}.`;
    }
    if (s.newPids.length > 0) return `The unit has new processes on its GPUs (PIDs ${s.newPids.join(", ")}): it was started meanwhile.`;
    if (!processesGone) {
      const live = s.gpus.flatMap((g) => g.pids);
      const exited = s.gpus.flatMap((g) => g.exitedPids);
      const who = [live.length ? `live PIDs ${uniq(live).join(", ")}` : "", exited.length ? `exited PIDs ${uniq(exited).join(", ")}` : ""]
        .filter(Boolean)
        .join(" and ");
      return `${formatMiBRounded(s.heldMiB)} still held on ${on} by ${who}.`;
    }
    if (!unexplainedSettled) return `${formatMiBRounded(s.heldMiB)} on ${on} not explained by any process yet; waiting for it to drain.`;
    if (s.pool && !s.ready)
      return `Processes gone; waiting for MemAvailable to recover (${formatMiBRounded(s.pool.availableMiB)} of ${formatMiBRounded(s.pool.totalMiB)} available).`;
    const stuck = s.gpus.filter((g) => g.unexplainedMiB > this.tol);
    if (stuck.length > 0)
      return `Processes gone; ${formatMiBRounded(stuck.reduce((a, g) => a + g.unexplainedMiB, 0))} on ${formatGpus(stuck)} is held by no process and no longer draining.`;
    return `The unit's memory on ${on} is released.`;
  }
}

function uniq(xs: number[]): number[] {
  return [...new Set(xs)];
}
