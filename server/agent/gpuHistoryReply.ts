/**
 * What `gpus.history` answers: with `points`, the range bucketed at that resolution
 * (./gpuHistoryBuckets.ts, the charts' path); without, the samples themselves, thinned to at
 * most HISTORY_REPLY_MAX_SAMPLES keeping each slice's peak (older clients and scripts).
 */
import type { GpuHistorySeries } from "../contract/gpuHistory";
import type { GpuSample } from "../contract/types";
import { bucketGpuHistory } from "./gpuHistoryBuckets";
import type { SampleHistory } from "./hub/gpuBuffer";
import { thinForReply } from "./sampleHistory";

export interface GpuHistoryQuery {
  sinceMs: number;
  untilMs?: number;
  uuid?: string;
  points?: number;
}

export function gpuHistoryReply(history: SampleHistory, q: GpuHistoryQuery & { points: number }): GpuHistorySeries;
export function gpuHistoryReply(history: SampleHistory, q: GpuHistoryQuery): GpuSample[] | GpuHistorySeries;
export function gpuHistoryReply(history: SampleHistory, q: GpuHistoryQuery): GpuSample[] | GpuHistorySeries {
  let samples = history.since(q.sinceMs, q.uuid);
  if (q.points) return bucketGpuHistory(samples, { sinceMs: q.sinceMs, untilMs: q.untilMs, points: q.points });
  if (q.untilMs != null) samples = samples.filter((s) => s.atMs <= q.untilMs!);
  return thinForReply(samples);
}
