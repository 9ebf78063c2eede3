/**
 * GPU samples kept for the charts: every sample for the last hour, then one every 10 s up
 * to 24 h. Holders are folded to one entry per (kind, unit) without command lines, which is
 * all the charts need and keeps 24 h × 8 GPUs in a few tens of MB.
 */
import type { GpuAttributed, GpuHolder, GpuSample, Ms } from "../contract/types";

/**
 * Samples one `gpus.history` reply without `points` carries at most: a longer range is thinned to
 * one sample (the peak) per equal slice of time (a day of 8-GPU history from `sinceMs: 0` is then
 * well under 2 MB of JSON, not 40). The charts ask for `points` and get buckets instead.
 */
export const HISTORY_REPLY_MAX_SAMPLES = 360;

export interface SampleHistoryOptions {
  fullResolutionMs?: number;
  coarseStepMs?: number;
  keepMs?: number;
}

export function compactSample(sample: GpuSample): GpuSample {
  return {
    atMs: sample.atMs,
    gpus: sample.gpus.map((g): GpuAttributed => {
      const folded = new Map<string, GpuHolder>();
      for (const h of g.holders) {
        const key = `${h.kind}|${h.unit ?? ""}`;
        const prev = folded.get(key);
        if (prev) prev.usedMiB += h.usedMiB;
        else folded.set(key, { kind: h.kind, pid: 0, unit: h.unit, processName: "", cmdline: [], state: h.state, usedMiB: h.usedMiB });
      }
      return { ...g, holders: [...folded.values()] };
    }),
  };
}

export class SampleHistory {
  private fine: GpuSample[] = [];
  private coarse: GpuSample[] = [];
  private readonly fullResolutionMs: number;
  private readonly coarseStepMs: number;
  private readonly keepMs: number;

  constructor(opts: SampleHistoryOptions = {}) {
    this.fullResolutionMs = opts.fullResolutionMs ?? 3600_000;
    this.coarseStepMs = opts.coarseStepMs ?? 10_000;
    this.keepMs = opts.keepMs ?? 24 * 3600_000;
  }

  push(sample: GpuSample): void {
    const last = this.fine.at(-1);
    if (last && sample.atMs <= last.atMs) return;
    this.fine.push(compactSample(sample));
    const fineCutoff = sample.atMs - this.fullResolutionMs;
    let drop = 0;
    while (drop < this.fine.length && this.fine[drop]!.atMs < fineCutoff) {
      const old = this.fine[drop]!;
      const lastCoarse = this.coarse.at(-1);
      if (!lastCoarse || old.atMs - lastCoarse.atMs >= this.coarseStepMs) this.coarse.push(old);
      drop++;
    }
    if (drop) this.fine.splice(0, drop);
    const keepCutoff = sample.atMs - this.keepMs;
    let dropCoarse = 0;
    while (dropCoarse < this.coarse.length && this.coarse[dropCoarse]!.atMs < keepCutoff) dropCoarse++;
    if (dropCoarse) this.coarse.splice(0, dropCoarse);
  }

  /**
   * Samples from an earlier run (the history store, one per ~10 s), oldest first. Call before
   * the first push: they go in front of everything this run collects.
   */
  restore(samples: GpuSample[]): void {
    const first = this.coarse[0]?.atMs ?? this.fine[0]?.atMs ?? Infinity;
    const keepCutoff = Math.min(first, Date.now()) - this.keepMs;
    const older = samples.filter((s) => s.atMs < first && s.atMs >= keepCutoff).sort((a, b) => a.atMs - b.atMs);
    this.coarse.unshift(...older);
  }

  /** Samples at or after sinceMs, oldest first; with uuid, only that GPU in each sample. */
  since(sinceMs: Ms, uuid?: string): GpuSample[] {
    const pick = (list: GpuSample[]) => list.filter((s) => s.atMs >= sinceMs);
    const all = [...pick(this.coarse), ...pick(this.fine)];
    return uuid ? all.map((s) => ({ atMs: s.atMs, gpus: s.gpus.filter((g) => g.uuid === uuid) })) : all;
  }

  /** `since()` for a reply: at most `maxSamples` (see thinForReply). */
  forReply(sinceMs: Ms, uuid?: string, maxSamples = HISTORY_REPLY_MAX_SAMPLES): GpuSample[] {
    return thinForReply(this.since(sinceMs, uuid), maxSamples);
  }

  size(): number {
    return this.fine.length + this.coarse.length;
  }
}

/** Memory a sample shows in use: memory.used, or its holders where nvidia-smi gave no number. */
function usedOf(s: GpuSample): number {
  let used = 0;
  for (const g of s.gpus) used += g.memoryUsedMiB ?? g.holders.reduce((a, h) => a + h.usedMiB, 0);
  return used;
}

/**
 * At most `maxSamples` of `all` (oldest first), one per equal slice of its time range: the
 * slice's peak (the sample with the most memory in use, so a short spike is still drawn); the
 * newest always kept. Charts ask for buckets instead (./gpuHistoryBuckets.ts).
 */
export function thinForReply(all: GpuSample[], maxSamples = HISTORY_REPLY_MAX_SAMPLES): GpuSample[] {
  if (all.length <= maxSamples) return all;
  const first = all[0]!.atMs;
  const sliceMs = (all.at(-1)!.atMs - first + 1) / (maxSamples - 1);
  const out: GpuSample[] = [];
  let lastSlice = -1;
  let best: GpuSample | null = null;
  let bestUsed = -1;
  for (const s of all.slice(0, -1)) {
    const slice = Math.floor((s.atMs - first) / sliceMs);
    if (slice !== lastSlice) {
      if (best) out.push(best);
      best = null;
      bestUsed = -1;
      lastSlice = slice;
    }
    const used = usedOf(s);
    if (used > bestUsed) {
      best = s;
      bestUsed = used;
    }
  }
  if (best) out.push(best);
  out.push(all.at(-1)!);
  return out.slice(-maxSamples);
}
