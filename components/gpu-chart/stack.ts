/**
 * GPU memory samples → columnar, stacked, downsampled arrays for the memory chart (memPlot.ts).
 *
 * Holder classes, stacked bottom to top:
 *   this    — processes in the unit the page is about
 *   exited  — memory still held by processes that already exited (the incident's drain);
 *             directly above "this" so a killed server's memory visibly changes hands
 *   other   — processes in other systemd units
 *   outside — processes outside any unit plus memory no listed process accounts for
 * The GPU's total memory is the ceiling.
 *
 * Unknown is never zero: a GPU missing from a sample, a memory reading nvidia-smi did not give
 * (with no per-process numbers to fall back on), or a pause in sampling longer than a few
 * periods becomes a null row, which the chart draws as a gap.
 *
 * Downsampling is M4 (first, min, max, last per pixel column) on the top of the stack, plus the
 * peak of exited-process memory (the band the incident is about, which can change hands with
 * "this unit" while the top stays flat). Whole samples are kept so the stacked layers stay
 * consistent: every drawn point is a real sample. At most 5 rows per column.
 */
import type { GpuAttributed, GpuSample } from "@/server/contract/types";

export type MemoryClass = "this" | "exited" | "other" | "outside";
/** Bottom to top. */
export const MEMORY_CLASSES: readonly MemoryClass[] = ["this", "exited", "other", "outside"];
export const MEMORY_CLASS_LABEL: Readonly<Record<MemoryClass, string>> = {
  this: "this unit",
  exited: "held by exited process",
  other: "other units",
  outside: "outside units / unattributed",
};
const K = MEMORY_CLASSES.length;

export type StackMode = "sum" | "per-gpu";

export interface StackOptions {
  /** the unit of the page, e.g. "vllm-kimi-k25.service" */
  unit: string;
  mode: StackMode;
  /** per-gpu: the GPU to show (uuid); default: the first GPU the unit holds, else the first GPU */
  gpuUuid?: string | null;
  /** sum: the GPUs to add up; default: those the unit held memory on in the window, else all */
  gpuUuids?: readonly string[] | null;
  fromMs: number;
  toMs: number;
  /** target number of pixel columns; ≤ 0 or absent: no downsampling */
  pixels?: number;
  /** a sampling pause longer than this becomes a gap; default 5 × the median period, ≥ 5 s */
  gapMs?: number;
}

export interface StackedMemory {
  /** x in seconds since the epoch */
  xs: number[];
  /** per class, MEMORY_CLASSES order, MiB; null = unknown */
  raw: (number | null)[][];
  /** per class, running sum from the bottom: cumulative[k] = raw[0] + … + raw[k] */
  cumulative: (number | null)[][];
  /** total memory (the ceiling), MiB */
  total: (number | null)[];
  /** nvidia-smi's memory.used, MiB */
  used: (number | null)[];
  /** GPUs included */
  gpuUuids: string[];
  /** true when the sum covers all GPUs because the unit held none in the window */
  fellBackToAllGpus: boolean;
  /** samples inside [fromMs, toMs] before downsampling (the output may add one either side) */
  sourcePoints: number;
}

export interface GpuInfo {
  uuid: string;
  index: number | null;
  name: string;
}

// ---------------------------------------------------------------------------------------
// Time column and the cache.

/** Samples in time order with their times in a typed array (read without touching the objects). */
interface Timeline {
  refs: readonly GpuSample[];
  t: Float64Array;
}

/** Per-sample record: this, exited, other, outside, total, used (MiB; NaN = unknown). */
const W = 6;

interface RecordColumns extends Timeline {
  rec: Float64Array;
}

interface UnitGpuColumns extends Timeline {
  gpus: (readonly string[])[];
}

/**
 * Per-sample results kept between calls. Samples are immutable once received, so a live chart
 * that gains one sample a second only reads that one: the previous call's columns are matched
 * to the new sample list by object identity (appends and trimming of old samples both work;
 * a replaced sample object is recomputed). Without it a full day (86 400 × 8 GPUs) costs
 * ~100 ms of object walking per redraw. Hold one per chart (useRef).
 */
export class StackCache {
  timeline: Timeline | null = null;
  private unit: string | null = null;
  unitGpus: UnitGpuColumns | null = null;
  internedGpuSets = new Map<string, readonly string[]>();
  private byGpuSet = new Map<string, RecordColumns>();

  forUnit(unit: string): this {
    if (unit !== this.unit) {
      this.unit = unit;
      this.unitGpus = null;
      this.internedGpuSets = new Map();
      this.byGpuSet.clear();
    }
    return this;
  }

  records(gpuSetKey: string): RecordColumns | undefined {
    return this.byGpuSet.get(gpuSetKey);
  }

  setRecords(gpuSetKey: string, cols: RecordColumns): void {
    this.byGpuSet.delete(gpuSetKey);
    // Two sets are enough to flip between "sum" and one GPU without recomputing.
    if (this.byGpuSet.size >= 2) this.byGpuSet.delete(this.byGpuSet.keys().next().value!);
    this.byGpuSet.set(gpuSetKey, cols);
  }
}

/** First index with t[i] ≥ x. */
function lowerBound(t: Float64Array, x: number, lo = 0, hi = t.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (t[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * For each sample, the index of the same object in prev, or -1. Pointer comparisons on the
 * common path (consecutive matches); on a miss, re-synchronise by time in prev's typed array.
 */
function matchPrevious(refs: readonly GpuSample[], t: Float64Array, prev: Timeline | null | undefined): Int32Array {
  const n = refs.length;
  const out = new Int32Array(n).fill(-1);
  if (!prev || prev.refs.length === 0) return out;
  const pr = prev.refs;
  const pt = prev.t;
  let p = 0;
  for (let j = 0; j < n; j++) {
    const s = refs[j]!;
    if (p < pr.length && pr[p] === s) {
      out[j] = p++;
      continue;
    }
    const tj = t[j]!;
    p = lowerBound(pt, tj, 0, pr.length);
    for (let q = p; q < pr.length && pt[q] === tj; q++) {
      if (pr[q] === s) {
        out[j] = q;
        p = q + 1;
        break;
      }
    }
  }
  return out;
}

function timelineOf(input: readonly GpuSample[], cache?: StackCache): Timeline {
  const n = input.length;
  let t = new Float64Array(n);
  const prev = cache?.timeline;
  if (prev && prev.refs.length > 0) {
    // Pointer-walk the previous timeline; only unmatched samples are dereferenced.
    let p = 0;
    for (let j = 0; j < n; j++) {
      const s = input[j]!;
      if (p < prev.refs.length && prev.refs[p] === s) {
        t[j] = prev.t[p++]!;
        continue;
      }
      t[j] = s.atMs;
      const q = lowerBound(prev.t, s.atMs);
      p = q < prev.refs.length && prev.refs[q] === s ? q + 1 : p;
    }
  } else {
    for (let j = 0; j < n; j++) t[j] = input[j]!.atMs;
  }
  let refs = input;
  for (let j = 1; j < n; j++) {
    if (t[j]! < t[j - 1]!) {
      refs = [...input].sort((a, b) => a.atMs - b.atMs);
      t = Float64Array.from(refs, (s) => s.atMs);
      break;
    }
  }
  const tl = { refs, t };
  if (cache) cache.timeline = tl;
  return tl;
}

function sliceTimeline(tl: Timeline, from: number, to: number): Timeline {
  return from === 0 && to === tl.refs.length ? tl : { refs: tl.refs.slice(from, to), t: tl.t.subarray(from, to) };
}

// ---------------------------------------------------------------------------------------

/** GPUs in the most recent sample, by index. */
export function gpuList(samples: readonly GpuSample[]): GpuInfo[] {
  let last: GpuSample | undefined;
  for (const s of samples) if (!last || s.atMs >= last.atMs) last = s;
  if (!last) return [];
  return last.gpus
    .map((g) => ({ uuid: g.uuid, index: g.index, name: g.name }))
    .sort((a, b) => (a.index ?? Number.MAX_SAFE_INTEGER) - (b.index ?? Number.MAX_SAFE_INTEGER) || a.uuid.localeCompare(b.uuid));
}

const NO_GPUS: readonly string[] = [];

/**
 * The GPUs a sample shows the unit on. Results are interned (one array per distinct set), so
 * the union over a day of samples is mostly pointer comparisons.
 */
function sampleUnitGpus(s: GpuSample, unit: string, intern: Map<string, readonly string[]>): readonly string[] {
  let found: string[] | null = null;
  for (const g of s.gpus) {
    for (const h of g.holders) {
      if ((h.kind === "unit" || h.kind === "exited") && h.unit === unit) {
        (found ??= []).push(g.uuid);
        break;
      }
    }
  }
  if (!found) return NO_GPUS;
  const key = found.join("\n");
  let shared = intern.get(key);
  if (!shared) {
    shared = found;
    intern.set(key, shared);
  }
  return shared;
}

function unitGpusInRange(tl: Timeline, from: number, to: number, unit: string, cache?: StackCache): string[] {
  let perSample: (readonly string[])[];
  let offset = 0;
  if (cache) {
    // The whole list, so zooming does not recompute.
    const c = cache.forUnit(unit);
    const match = matchPrevious(tl.refs, tl.t, c.unitGpus);
    perSample = new Array(tl.refs.length);
    for (let j = 0; j < tl.refs.length; j++)
      perSample[j] = match[j]! >= 0 ? c.unitGpus!.gpus[match[j]!]! : sampleUnitGpus(tl.refs[j]!, unit, c.internedGpuSets);
    c.unitGpus = { refs: tl.refs, t: tl.t, gpus: perSample };
  } else {
    const intern = new Map<string, readonly string[]>();
    perSample = [];
    for (let j = from; j < to; j++) perSample.push(sampleUnitGpus(tl.refs[j]!, unit, intern));
    offset = from;
  }
  const found = new Set<string>();
  let last: readonly string[] | null = null;
  for (let j = from; j < to; j++) {
    const gpus = perSample[j - offset]!;
    if (gpus === last) continue;
    last = gpus;
    for (let k = 0; k < gpus.length; k++) found.add(gpus[k]!);
  }
  return [...found];
}

/** GPUs on which the unit (or an exited process last seen in it) held memory within [fromMs, toMs]. */
export function unitGpuUuids(samples: readonly GpuSample[], unit: string, fromMs = -Infinity, toMs = Infinity, cache?: StackCache): string[] {
  const tl = timelineOf(samples, cache);
  const from = Math.max(0, lowerBound(tl.t, fromMs) - 1);
  const to = Math.min(tl.refs.length, lowerBound(tl.t, toMs + 1e-9) + 1);
  return unitGpusInRange(tl, from, to, unit, cache);
}

/**
 * One GPU's memory split into classes, written into out[0..K-1]; returns false when nothing
 * is known. Per-process numbers count even without memory.used (GB10 reports only those);
 * the unattributed rest needs memory.used.
 */
function classify(g: GpuAttributed, unit: string, out: Float64Array): boolean {
  let me = 0;
  let exited = 0;
  let other = 0;
  let outside = 0;
  const hs = g.holders;
  for (let i = 0; i < hs.length; i++) {
    const h = hs[i]!;
    if (h.kind === "exited") exited += h.usedMiB;
    else if (h.kind === "unit") {
      if (h.unit === unit) me += h.usedMiB;
      else other += h.usedMiB;
    } else outside += h.usedMiB;
  }
  if (g.memoryUsedMiB == null) {
    if (hs.length === 0) return false;
  } else {
    outside += g.unattributedMiB;
  }
  out[0] = me;
  out[1] = exited;
  out[2] = other;
  out[3] = outside;
  return true;
}

/** Fill rec[at..at+W) for one sample over the wanted GPUs. */
function sampleRecord(s: GpuSample, wanted: ReadonlySet<string>, unit: string, one: Float64Array, rec: Float64Array, at: number): void {
  const nGpus = wanted.size;
  let seen = 0;
  let known = nGpus > 0;
  let a0 = 0,
    a1 = 0,
    a2 = 0,
    a3 = 0,
    total = 0,
    used = 0;
  let totalKnown = true;
  let usedKnown = true;
  const gs = s.gpus;
  for (let gi = 0; gi < gs.length; gi++) {
    const g = gs[gi]!;
    if (!wanted.has(g.uuid)) continue;
    seen++;
    if (!classify(g, unit, one)) {
      known = false;
      break;
    }
    a0 += one[0]!;
    a1 += one[1]!;
    a2 += one[2]!;
    a3 += one[3]!;
    if (g.memoryTotalMiB == null) totalKnown = false;
    else total += g.memoryTotalMiB;
    if (g.memoryUsedMiB == null) usedKnown = false;
    else used += g.memoryUsedMiB;
  }
  if (seen < nGpus) known = false; // a GPU missing from this sample
  if (known) {
    rec[at] = a0;
    rec[at + 1] = a1;
    rec[at + 2] = a2;
    rec[at + 3] = a3;
  } else {
    rec[at] = rec[at + 1] = rec[at + 2] = rec[at + 3] = Number.NaN;
  }
  rec[at + 4] = known && totalKnown ? total : Number.NaN;
  rec[at + 5] = known && usedKnown ? used : Number.NaN;
}

function recordColumns(tl: Timeline, wanted: ReadonlySet<string>, unit: string, prev: RecordColumns | undefined): RecordColumns {
  const n = tl.refs.length;
  const rec = new Float64Array(n * W);
  const match = matchPrevious(tl.refs, tl.t, prev);
  const one = new Float64Array(K);
  for (let j = 0; j < n; j++) {
    const q = match[j]!;
    if (q >= 0) {
      const src = prev!.rec;
      for (let k = 0, a = q * W, b = j * W; k < W; k++) rec[b + k] = src[a + k]!;
    } else sampleRecord(tl.refs[j]!, wanted, unit, one, rec, j * W);
  }
  return { refs: tl.refs, t: tl.t, rec };
}

/** Median spacing of the first ~200 samples in [from, to), for gap detection. */
function medianStepMs(t: Float64Array, from: number, to: number): number {
  const steps: number[] = [];
  for (let i = from + 1; i < to && steps.length < 200; i++) steps.push(t[i]! - t[i - 1]!);
  if (steps.length === 0) return 1000;
  steps.sort((a, b) => a - b);
  return steps[steps.length >> 1]!;
}

export function stackMemory(input: readonly GpuSample[], opts: StackOptions, cache?: StackCache): StackedMemory {
  const tl = timelineOf(input, cache);
  const t = tl.t;
  // One sample either side of the window so the areas reach its edges.
  const i0 = Math.max(0, lowerBound(t, opts.fromMs) - 1);
  const i1 = Math.min(tl.refs.length, lowerBound(t, opts.toMs + 1e-9) + 1);
  const n = Math.max(0, i1 - i0);

  let uuids: string[];
  let fellBack = false;
  if (opts.mode === "per-gpu") {
    if (opts.gpuUuid) uuids = [opts.gpuUuid];
    else {
      // Default: the first GPU (by index) the unit holds in the window, else the first GPU.
      const listed = gpuList(tl.refs.slice(-1));
      const held = new Set(unitGpusInRange(tl, i0, i1, opts.unit, cache));
      const pick = listed.find((g) => held.has(g.uuid)) ?? listed[0];
      uuids = pick ? [pick.uuid] : [];
    }
  } else if (opts.gpuUuids && opts.gpuUuids.length > 0) {
    uuids = [...opts.gpuUuids];
  } else {
    uuids = unitGpusInRange(tl, i0, i1, opts.unit, cache);
    if (uuids.length === 0) {
      fellBack = true;
      const all = new Set<string>();
      for (let i = i0; i < i1; i++) for (const g of tl.refs[i]!.gpus) all.add(g.uuid);
      uuids = [...all];
    }
  }
  const wanted = new Set(uuids);

  // Pass 1: one record per sample. With a cache, for every sample (so zoom and pan are free),
  // reusing the previous call's records; without, for the window only.
  let rec: Float64Array;
  let offset: number;
  if (cache) {
    const c = cache.forUnit(opts.unit);
    const key = [...uuids].sort().join(",");
    const cols = recordColumns(tl, wanted, opts.unit, c.records(key));
    c.setRecords(key, cols);
    rec = cols.rec;
    offset = i0;
  } else {
    rec = recordColumns(sliceTimeline(tl, i0, i1), wanted, opts.unit, undefined).rec;
    offset = 0;
  }
  const top = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    const b = (offset + j) * W;
    top[j] = rec[b]! + rec[b + 1]! + rec[b + 2]! + rec[b + 3]!; // NaN propagates
  }

  // Pass 2: choose output rows (indices into 0..n-1, or -1 = a gap row at gapTimes[k]).
  const gapMs = opts.gapMs ?? Math.max(5000, 5 * medianStepMs(t, i0, i1));
  const pixels = opts.pixels ?? 0;
  const downsample = pixels > 0 && n > pixels * 2;
  const bucketMs = downsample ? (opts.toMs - opts.fromMs) / pixels : 0;
  const rows: number[] = [];
  const gapTimes: number[] = [];
  const pushRow = (idx: number) => {
    rows.push(idx);
    gapTimes.push(0);
  };
  const pushGap = (atMs: number) => {
    if (rows.length > 0 && rows[rows.length - 1] === -1) return;
    rows.push(-1);
    gapTimes.push(atMs);
  };

  const EXITED = MEMORY_CLASSES.indexOf("exited");
  const exitedAt = (j: number) => rec[(offset + j) * W + EXITED]!;
  let bucket = Number.NaN;
  let bFirst = -1,
    bLast = -1,
    bMin = -1,
    bMax = -1,
    bExited = -1;
  const flush = () => {
    if (bFirst < 0) return;
    const picks = [bFirst, bMin, bMax, bLast];
    if (exitedAt(bExited) > 0) picks.push(bExited);
    picks.sort((a, b) => a - b);
    let prev = -1;
    for (const p of picks) {
      if (p !== prev) pushRow(p);
      prev = p;
    }
    bFirst = bLast = bMin = bMax = bExited = -1;
  };

  for (let j = 0; j < n; j++) {
    const tj = t[i0 + j]!;
    if (j > 0 && tj - t[i0 + j - 1]! > gapMs) {
      flush();
      pushGap((tj + t[i0 + j - 1]!) / 2);
    }
    if (Number.isNaN(top[j]!)) {
      flush();
      pushGap(tj);
      continue;
    }
    if (!downsample) {
      pushRow(j);
      continue;
    }
    const bk = Math.floor((tj - opts.fromMs) / bucketMs);
    if (bk !== bucket) {
      flush();
      bucket = bk;
    }
    if (bFirst < 0) {
      bFirst = bLast = bMin = bMax = bExited = j;
    } else {
      bLast = j;
      if (top[j]! < top[bMin]!) bMin = j;
      if (top[j]! > top[bMax]!) bMax = j;
      if (exitedAt(j) > exitedAt(bExited)) bExited = j;
    }
  }
  flush();

  // Pass 3: columnar output.
  const m = rows.length;
  const xs = new Array<number>(m);
  const raw: (number | null)[][] = MEMORY_CLASSES.map(() => new Array<number | null>(m));
  const cumulative: (number | null)[][] = MEMORY_CLASSES.map(() => new Array<number | null>(m));
  const total = new Array<number | null>(m);
  const used = new Array<number | null>(m);
  for (let r = 0; r < m; r++) {
    const j = rows[r]!;
    if (j < 0) {
      xs[r] = gapTimes[r]! / 1000;
      for (let k = 0; k < K; k++) raw[k]![r] = cumulative[k]![r] = null;
      total[r] = used[r] = null;
      continue;
    }
    xs[r] = t[i0 + j]! / 1000;
    const b = (offset + j) * W;
    let acc = 0;
    for (let k = 0; k < K; k++) {
      const v = rec[b + k]!;
      acc += v;
      raw[k]![r] = v;
      cumulative[k]![r] = acc;
    }
    const tv = rec[b + 4]!;
    const uv = rec[b + 5]!;
    total[r] = Number.isNaN(tv) ? null : tv;
    used[r] = Number.isNaN(uv) ? null : uv;
  }
  const inside = lowerBound(t, opts.toMs + 1e-9) - lowerBound(t, opts.fromMs);
  return { xs, raw, cumulative, total, used, gpuUuids: uuids, fellBackToAllGpus: fellBack, sourcePoints: inside };
}
