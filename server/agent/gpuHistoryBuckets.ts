/**
 * GPU samples → one row per time bucket (server/contract/gpuHistory.ts): what `gpus.history`
 * and `units.timeline` answer when asked for a number of points. Per GPU and bucket: min, max
 * and last of used memory, each holder class (kind + unit, processes summed) at its peak,
 * unattributed memory at its peak; telemetry at the bucket's max (utilisation, power,
 * temperature) or min (SM clock). Buckets with no sample are left out (a pause stays a gap).
 */
import { deltaEncode, indexRanges, runLengthEncode, type GpuHistoryGpu, type GpuHistoryHolder, type GpuHistorySeries } from "../contract/gpuHistory";
import type { GpuHolder, GpuSample, HolderKind, ProcState } from "../contract/types";

interface GpuAcc {
  uuid: string;
  index: number | null;
  name: string;
  memoryTotalMiB: number | null;
  present: Uint8Array;
  last: (number | null)[];
  min: (number | null)[];
  max: (number | null)[];
  unattributed: (number | null)[];
  /** stamp/sum: the sample being summed and its running sum */
  holders: Map<string, { kind: HolderKind; unit: string | null; state: ProcState; used: number[]; stamp: number; sum: number }>;
  util: (number | null)[];
  memUtil: (number | null)[];
  temp: (number | null)[];
  power: (number | null)[];
  powerLimit: (number | null)[];
  sm: (number | null)[];
  smMax: (number | null)[];
  throttleKnown: Uint8Array;
  throttle: Map<string, number[]>;
}

const peak = (a: number | null | undefined, b: number | null | undefined): number | null => (a == null ? (b ?? null) : b == null ? a : Math.max(a, b));
const low = (a: number | null | undefined, b: number | null | undefined): number | null => (a == null ? (b ?? null) : b == null ? a : Math.min(a, b));
const lastKnown = (a: number | null | undefined, b: number | null | undefined): number | null => b ?? a ?? null;

function holderKey(h: GpuHolder): string {
  return `${h.kind}|${h.unit ?? ""}`;
}

/**
 * `samples` oldest first (as SampleHistory.since answers). At most `points` rows; `sinceMs` and
 * `untilMs` bound the range (default: the first and last sample).
 */
export function bucketGpuHistory(samples: readonly GpuSample[], opts: { sinceMs: number; untilMs?: number; points: number }): GpuHistorySeries {
  const points = Math.max(1, Math.floor(opts.points));
  const inRange = samples.filter((s) => s.atMs >= opts.sinceMs && (opts.untilMs == null || s.atMs <= opts.untilMs));
  const fromMs = Math.max(opts.sinceMs, inRange[0]?.atMs ?? opts.sinceMs);
  const toMs = opts.untilMs ?? inRange.at(-1)?.atMs ?? fromMs;
  const bucketMs = Math.max(1, Math.ceil((toMs - fromMs + 1) / points));
  // bucket index of each sample → row index (empty buckets dropped)
  const rowAt: number[] = [];
  let rows = 0;
  let lastBucket = -1;
  for (const s of inRange) {
    const b = Math.min(points - 1, Math.floor((s.atMs - fromMs) / bucketMs));
    if (b !== lastBucket) {
      rows++;
      lastBucket = b;
    }
    rowAt.push(rows - 1);
  }
  const at: number[] = new Array(rows).fill(0);
  const gpus = new Map<string, GpuAcc>();
  const col = () => new Array<number | null>(rows).fill(null);
  inRange.forEach((s, k) => {
    const r = rowAt[k]!;
    at[r] = s.atMs;
    for (const g of s.gpus) {
      let a = gpus.get(g.uuid);
      if (!a) {
        a = {
          uuid: g.uuid,
          index: g.index,
          name: g.name,
          memoryTotalMiB: g.memoryTotalMiB,
          present: new Uint8Array(rows),
          last: col(),
          min: col(),
          max: col(),
          unattributed: col(),
          holders: new Map(),
          util: col(),
          memUtil: col(),
          temp: col(),
          power: col(),
          powerLimit: col(),
          sm: col(),
          smMax: col(),
          throttleKnown: new Uint8Array(rows),
          throttle: new Map(),
        };
        gpus.set(g.uuid, a);
      }
      a.index = g.index;
      a.name = g.name;
      a.memoryTotalMiB = g.memoryTotalMiB ?? a.memoryTotalMiB;
      a.present[r] = 1;
      const used = g.memoryUsedMiB;
      a.last[r] = lastKnown(a.last[r], used);
      a.min[r] = low(a.min[r], used);
      a.max[r] = peak(a.max[r], used);
      a.unattributed[r] = peak(a.unattributed[r], g.unattributedMiB);
      a.util[r] = peak(a.util[r], g.utilizationPct);
      a.memUtil[r] = peak(a.memUtil[r], g.memoryUtilizationPct);
      a.temp[r] = peak(a.temp[r], g.temperatureC);
      a.power[r] = peak(a.power[r], g.powerW);
      a.powerLimit[r] = lastKnown(a.powerLimit[r], g.powerLimitW);
      a.sm[r] = low(a.sm[r], g.smClockMHz);
      a.smMax[r] = lastKnown(a.smMax[r], g.smClockMaxMHz);
      if (g.throttleReasons) {
        a.throttleKnown[r] = 1;
        for (const reason of g.throttleReasons) {
          let col = a.throttle.get(reason);
          if (!col) a.throttle.set(reason, (col = new Array<number>(rows).fill(0)));
          col[r] = 1;
        }
      }
      // processes of one class summed in this sample (a running sum: usedMiB ≥ 0), then the class's peak over the bucket
      for (const h of g.holders) {
        const key = holderKey(h);
        let hs = a.holders.get(key);
        if (!hs) a.holders.set(key, (hs = { kind: h.kind, unit: h.unit, state: h.state, used: new Array<number>(rows).fill(0), stamp: -1, sum: 0 }));
        hs.state = h.state;
        if (hs.stamp !== k) {
          hs.stamp = k;
          hs.sum = 0;
        }
        hs.sum += h.usedMiB;
        if (hs.sum > hs.used[r]!) hs.used[r] = hs.sum;
      }
    }
  });
  const out: GpuHistoryGpu[] = [];
  for (const a of gpus.values()) {
    const absent = indexRanges(rows, (i) => !a.present[i]);
    const holders: GpuHistoryHolder[] = [...a.holders.values()].map((h) => ({ kind: h.kind, unit: h.unit, state: h.state, usedMaxMiB: deltaEncode(h.used) }));
    out.push({
      uuid: a.uuid,
      index: a.index,
      name: a.name,
      memoryTotalMiB: a.memoryTotalMiB,
      absent,
      usedLastMiB: deltaEncode(a.last),
      usedBelowLastMiB: runLengthEncode(a.last.map((v, i) => (v == null || a.min[i] == null ? null : Math.round(v) - Math.round(a.min[i]!)))),
      usedAboveLastMiB: runLengthEncode(a.last.map((v, i) => (v == null || a.max[i] == null ? null : Math.round(a.max[i]!) - Math.round(v)))),
      unattributedMaxMiB: deltaEncode(a.unattributed),
      holders,
      utilizationPct: deltaEncode(a.util),
      memoryUtilizationPct: deltaEncode(a.memUtil),
      temperatureC: deltaEncode(a.temp),
      powerW: deltaEncode(a.power),
      powerLimitW: deltaEncode(a.powerLimit),
      smClockMHz: deltaEncode(a.sm),
      smClockMaxMHz: deltaEncode(a.smMax),
      throttle: [...a.throttle].map(([reason, active]) => ({ reason, active: runLengthEncode(active) })),
      throttleUnknown: indexRanges(rows, (i) => a.present[i] === 1 && !a.throttleKnown[i]),
    });
  }
  return { format: "buckets-v1", fromMs, toMs, bucketMs, sourceSamples: inRange.length, atMs: deltaEncode(at), gpus: out };
}
