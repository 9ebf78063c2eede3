/**
 * GPU history at the resolution drawn: `gpus.history { sinceMs, untilMs?, points }` (and
 * `units.timeline { …, points }`, which carries the same series) answer one row per time bucket
 * instead of every sample. Per GPU and bucket the agent keeps the min, max and last of used
 * memory, each holder class (kind + unit, processes summed) at its peak in the bucket — so a
 * bucket's peak and the memory of an exited process are still drawn — and the telemetry lanes
 * (utilisation, power, temperature: the bucket's max; SM clock: its min, where throttling shows).
 *
 * The columns are integers, delta-encoded (each value minus the previous known one; null stays
 * null = not reported) and run-length-encoded, because a day of steady memory is then a few runs: 24 h × 8 GPUs at
 * 2,000 points stays within a few hundred KB of JSON. `decodeGpuHistory` turns a reply back into
 * `GpuSample[]` (one per bucket, at the bucket's last sample) for the existing chart code.
 */
import type { GpuAttributed, GpuHolder, GpuSample, HolderKind, ProcState } from "./types";

/**
 * A column of integers, delta-encoded (first known value absolute, then differences; null = not
 * reported) and run-length-encoded: `[count, entry]` stands for `count` copies of `entry` (a
 * steady value is a run of 0 deltas). See encodeColumn / decodeColumn.
 */
export type DeltaColumn = (number | null | [number, number | null])[];

export interface GpuHistoryHolder {
  kind: HolderKind;
  unit: string | null;
  /** the state of its last appearance */
  state: ProcState;
  /** per bucket, its peak MiB (0 = not holding in that bucket), delta-encoded */
  usedMaxMiB: DeltaColumn;
}

export interface GpuHistoryGpu {
  uuid: string;
  index: number | null;
  name: string;
  memoryTotalMiB: number | null;
  /** [from, to) bucket index ranges in which this GPU was in no sample */
  absent: [number, number][];
  usedLastMiB: DeltaColumn;
  /** offsets below / above the last value (≥ 0), run-length- but not delta-encoded: mostly 0 */
  usedBelowLastMiB: DeltaColumn;
  usedAboveLastMiB: DeltaColumn;
  unattributedMaxMiB: DeltaColumn;
  holders: GpuHistoryHolder[];
  utilizationPct: DeltaColumn;
  memoryUtilizationPct: DeltaColumn;
  temperatureC: DeltaColumn;
  powerW: DeltaColumn;
  powerLimitW: DeltaColumn;
  /** the bucket's lowest SM clock (a throttled moment is not averaged away) */
  smClockMHz: DeltaColumn;
  smClockMaxMHz: DeltaColumn;
  /** why clocks were held down: per reason, 1 in the buckets where it was active at some sample */
  throttle: { reason: string; active: DeltaColumn }[];
  /** [from, to) bucket ranges with no throttle reasons reported (null, not "none") */
  throttleUnknown: [number, number][];
}

export interface GpuHistorySeries {
  format: "buckets-v1";
  fromMs: number;
  toMs: number;
  bucketMs: number;
  /** samples folded into the reply */
  sourceSamples: number;
  /** each bucket's last sample time, delta-encoded (never null) */
  atMs: DeltaColumn;
  gpus: GpuHistoryGpu[];
}

/** Most points one reply may ask for (a chart wider than this many pixels gets this many). */
export const GPU_HISTORY_MAX_POINTS = 4000;

/** Runs of 3 or more equal entries become `[count, entry]`. */
export function runLengthEncode(values: readonly (number | null)[]): DeltaColumn {
  const out: DeltaColumn = [];
  for (let i = 0; i < values.length;) {
    const v = values[i]!;
    let j = i + 1;
    while (j < values.length && values[j] === v) j++;
    const n = j - i;
    if (n >= 3) out.push([n, v]);
    else for (let k = 0; k < n; k++) out.push(v);
    i = j;
  }
  return out;
}

export function runLengthDecode(column: readonly (number | null | [number, number | null])[]): (number | null)[] {
  const out: (number | null)[] = [];
  for (const e of column) {
    if (Array.isArray(e)) for (let k = 0; k < e[0]; k++) out.push(e[1]);
    else out.push(e);
  }
  return out;
}

/** Delta- then run-length-encoded (values rounded to integers). */
export function deltaEncode(values: readonly (number | null)[]): DeltaColumn {
  const deltas: (number | null)[] = new Array(values.length);
  let prev = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v == null) deltas[i] = null;
    else {
      const r = Math.round(v);
      deltas[i] = r - prev;
      prev = r;
    }
  }
  return runLengthEncode(deltas);
}

export function deltaDecode(column: DeltaColumn): (number | null)[] {
  const deltas = runLengthDecode(column);
  let prev = 0;
  for (let i = 0; i < deltas.length; i++) {
    const d = deltas[i];
    if (d != null) deltas[i] = prev += d;
  }
  return deltas;
}

export function isGpuHistorySeries(value: unknown): value is GpuHistorySeries {
  return typeof value === "object" && value !== null && (value as { format?: unknown }).format === "buckets-v1";
}

/** The GPU fields a decoded bucket carries beyond GpuAttributed. */
export interface DecodedGpu extends GpuAttributed {
  /** lowest used memory in the bucket (memoryUsedMiB is its peak) */
  memoryUsedMinMiB?: number | null;
  /** used memory at the bucket's last sample */
  memoryUsedLastMiB?: number | null;
}

/**
 * One GpuSample per bucket, at the bucket's last sample time: memory.used is the bucket's peak,
 * each holder class its peak, so what the chart stacks never hides a peak.
 */
export function decodeGpuHistory(series: GpuHistorySeries): GpuSample[] {
  const at = deltaDecode(series.atMs);
  const n = at.length;
  const cols = series.gpus.map((g) => {
    const last = deltaDecode(g.usedLastMiB);
    const below = runLengthDecode(g.usedBelowLastMiB);
    const above = runLengthDecode(g.usedAboveLastMiB);
    const absent = rangeMask(g.absent, n);
    return {
      g,
      absent,
      last,
      min: last.map((v, i) => (v == null ? null : v - (below[i] ?? 0))),
      max: last.map((v, i) => (v == null ? null : v + (above[i] ?? 0))),
      unattributed: deltaDecode(g.unattributedMaxMiB),
      holders: g.holders.map((h) => ({ h, used: deltaDecode(h.usedMaxMiB) })),
      util: deltaDecode(g.utilizationPct),
      memUtil: deltaDecode(g.memoryUtilizationPct),
      temp: deltaDecode(g.temperatureC),
      power: deltaDecode(g.powerW),
      powerLimit: deltaDecode(g.powerLimitW),
      sm: deltaDecode(g.smClockMHz),
      smMax: deltaDecode(g.smClockMaxMHz),
      throttle: (g.throttle ?? []).map((t) => ({ reason: t.reason, active: runLengthDecode(t.active) })),
      throttleUnknown: rangeMask(g.throttleUnknown ?? [], n),
    };
  });
  const out: GpuSample[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const gpus: GpuAttributed[] = [];
    for (const c of cols) {
      if (c.absent[i]) continue;
      const holders: GpuHolder[] = [];
      for (const { h, used } of c.holders) {
        const v = used[i];
        if (v) holders.push({ kind: h.kind, pid: 0, unit: h.unit, processName: "", cmdline: [], state: h.state, usedMiB: v });
      }
      const gpu: DecodedGpu = {
        uuid: c.g.uuid,
        index: c.g.index,
        name: c.g.name,
        pciBusId: "",
        memoryTotalMiB: c.g.memoryTotalMiB,
        memoryUsedMiB: c.max[i] ?? null,
        memoryUsedMinMiB: c.min[i] ?? null,
        memoryUsedLastMiB: c.last[i] ?? null,
        utilizationPct: c.util[i] ?? null,
        memoryUtilizationPct: c.memUtil[i] ?? null,
        temperatureC: c.temp[i] ?? null,
        powerW: c.power[i] ?? null,
        powerLimitW: c.powerLimit[i] ?? null,
        smClockMHz: c.sm[i] ?? null,
        smClockMaxMHz: c.smMax[i] ?? null,
        unattributedMiB: c.unattributed[i] ?? 0,
        holders,
        throttleReasons: c.throttleUnknown[i] ? null : c.throttle.filter((t) => t.active[i]).map((t) => t.reason),
      };
      gpus.push(gpu);
    }
    out[i] = { atMs: at[i]!, gpus };
  }
  return out;
}

function rangeMask(ranges: readonly [number, number][], n: number): Uint8Array {
  const mask = new Uint8Array(n);
  for (const [from, to] of ranges) mask.fill(1, Math.max(0, from), Math.min(n, to));
  return mask;
}

/** [from, to) ranges of the indices in 0..n where `on(i)`. */
export function indexRanges(n: number, on: (i: number) => boolean): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < n; i++) {
    if (!on(i)) continue;
    const start = i;
    while (i < n && on(i)) i++;
    out.push([start, i]);
  }
  return out;
}
