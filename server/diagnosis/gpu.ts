/**
 * GPU memory contention for a unit: who holds memory on the GPUs it needs, and how fast memory
 * held by exited processes drains (linear fit over recent samples). Pure helpers for the cases
 * in ./cases/ (see ./gpuEvidence.ts for how they read as evidence).
 */
import type { GpuAttributed, GpuSample, HolderKind, ProcState } from "../contract/types";

export interface GpuRef {
  uuid: string;
  index: number | null;
}

/** One process's memory across the GPUs considered. */
export interface HolderGroup {
  kind: HolderKind;
  pid: number;
  unit: string | null;
  processName: string;
  cmdline: string[];
  state: ProcState;
  mib: number;
  gpus: GpuRef[];
  exitedAtMs?: number;
}

export interface GpuContention {
  /** GPUs looked at (needed by the unit and present in the sample). */
  gpus: GpuRef[];
  /** Where the list of GPUs came from. */
  gpuSource: "given" | "polled" | "history" | "all";
  /** needed uuids that the sample does not contain */
  missing: string[];
  exited: HolderGroup[];
  /** Live processes of other units, grouped per process. */
  otherUnits: HolderGroup[];
  /** Live processes still in this unit's own cgroup (left over from an earlier run). */
  leftover: HolderGroup[];
  outside: HolderGroup[];
  /** Memory in use that no listed process accounts for (per GPU over the noise threshold). */
  unattributed: { mib: number; gpus: (GpuRef & { mib: number })[] };
  /** Sum of all the above. */
  totalHeldMiB: number;
  /** memory.used/total over the GPUs considered; null where nvidia-smi gave no number. */
  usedMiB: number | null;
  totalMiB: number | null;
}

/** Below this a holder is noise (driver bookkeeping), not a reason to wait. */
export const MIN_HOLDER_MIB = 1;
/** Unattributed memory under this per GPU is treated as driver overhead. */
export const MIN_UNATTRIBUTED_MIB_PER_GPU = 100;
/** Less than this in total on the unit's GPUs is "free". */
export const MIN_CONTENTION_MIB = 100;

/** GPU uuids on which the unit (or its exited processes) held memory in any of the samples. */
export function gpusUsedByUnit(unitName: string, samples: readonly (GpuSample | null)[]): string[] {
  const uuids = new Set<string>();
  for (const sample of samples) {
    if (!sample) continue;
    for (const gpu of sample.gpus) {
      if (gpu.holders.some((h) => h.unit === unitName && h.usedMiB >= MIN_HOLDER_MIB)) uuids.add(gpu.uuid);
    }
  }
  return [...uuids].sort();
}

function groupHolders(gpus: readonly GpuAttributed[], filter: (h: GpuAttributed["holders"][number]) => boolean): HolderGroup[] {
  const byPid = new Map<string, HolderGroup>();
  for (const gpu of gpus) {
    for (const holder of gpu.holders) {
      if (!filter(holder) || !(holder.usedMiB >= MIN_HOLDER_MIB)) continue;
      const key = `${holder.kind}:${holder.pid}`;
      let group = byPid.get(key);
      if (!group) {
        group = {
          kind: holder.kind,
          pid: holder.pid,
          unit: holder.unit,
          processName: holder.processName,
          cmdline: holder.cmdline,
          state: holder.state,
          mib: 0,
          gpus: [],
          exitedAtMs: holder.exitedAtMs,
        };
        byPid.set(key, group);
      }
      group.mib += holder.usedMiB;
      if (!group.gpus.some((g) => g.uuid === gpu.uuid)) group.gpus.push({ uuid: gpu.uuid, index: gpu.index });
      if (holder.exitedAtMs !== undefined && (group.exitedAtMs === undefined || holder.exitedAtMs < group.exitedAtMs)) {
        group.exitedAtMs = holder.exitedAtMs;
      }
    }
  }
  return [...byPid.values()].sort((a, b) => b.mib - a.mib || a.pid - b.pid);
}

/**
 * Who holds memory on the unit's GPUs. `unitPids`, when given, are the PIDs in the unit's cgroup
 * right now (fresher than the sample, which can be up to one sampling interval old): a holder the
 * sample still lists as a live process of this unit but that is no longer in its cgroup has
 * exited since — counted as exited, last seen alive at the sample's time. Without this, the
 * moment after a kill + restart reads as "waits for itself".
 */
export function analyseContention(
  unitName: string,
  sample: GpuSample,
  history: readonly (GpuSample | null)[],
  givenGpus: readonly string[] | undefined,
  unitPids?: ReadonlySet<number>,
  /** GPUs the unit's ExecStartPre selects with `nvidia-smi -i` (used when givenGpus is absent) */
  polledGpus?: readonly string[],
): GpuContention {
  let wanted: string[];
  let gpuSource: GpuContention["gpuSource"];
  if (givenGpus && givenGpus.length > 0) {
    wanted = [...givenGpus];
    gpuSource = "given";
  } else if (polledGpus && polledGpus.length > 0) {
    wanted = [...polledGpus];
    gpuSource = "polled";
  } else {
    const derived = gpusUsedByUnit(unitName, [...history, sample]);
    if (derived.length > 0) {
      wanted = derived;
      gpuSource = "history";
    } else {
      wanted = sample.gpus.map((g) => g.uuid);
      gpuSource = "all";
    }
  }
  const wantedSet = new Set(wanted);
  const gpus = sample.gpus
    .filter((g) => wantedSet.has(g.uuid))
    .map((g) =>
      unitPids === undefined
        ? g
        : {
            ...g,
            holders: g.holders.map((h) =>
              h.kind === "unit" && h.unit === unitName && !unitPids.has(h.pid)
                ? { ...h, kind: "exited" as const, state: "gone" as const, exitedAtMs: sample.atMs }
                : h,
            ),
          },
    );
  const present = new Set(gpus.map((g) => g.uuid));
  const missing = wanted.filter((u) => !present.has(u));

  const exited = groupHolders(gpus, (h) => h.kind === "exited");
  const otherUnits = groupHolders(gpus, (h) => h.kind === "unit" && h.unit !== unitName);
  const leftover = groupHolders(gpus, (h) => h.kind === "unit" && h.unit === unitName);
  const outside = groupHolders(gpus, (h) => h.kind === "outside");
  const unattributedGpus = gpus.filter((g) => g.unattributedMiB >= MIN_UNATTRIBUTED_MIB_PER_GPU);
  const unattributed = {
    mib: unattributedGpus.reduce((sum, g) => sum + g.unattributedMiB, 0),
    gpus: unattributedGpus.map((g) => ({ uuid: g.uuid, index: g.index, mib: g.unattributedMiB })),
  };
  const sumMiB = (groups: HolderGroup[]) => groups.reduce((sum, g) => sum + g.mib, 0);
  const totalHeldMiB = sumMiB(exited) + sumMiB(otherUnits) + sumMiB(leftover) + sumMiB(outside) + unattributed.mib;

  const used = gpus.map((g) => g.memoryUsedMiB);
  const total = gpus.map((g) => g.memoryTotalMiB);
  return {
    gpus: gpus.map((g) => ({ uuid: g.uuid, index: g.index })),
    gpuSource,
    missing,
    exited,
    otherUnits,
    leftover,
    outside,
    unattributed,
    totalHeldMiB,
    usedMiB: gpus.length > 0 && used.every((v) => v !== null) ? used.reduce<number>((s, v) => s + (v ?? 0), 0) : null,
    totalMiB: gpus.length > 0 && total.every((v) => v !== null) ? total.reduce<number>((s, v) => s + (v ?? 0), 0) : null,
  };
}

/**
 * GPUs on which the given exited processes, or other exited processes of the same units, held
 * memory in any of the samples. The drain of exited processes is measured over these: with one
 * worker per GPU the GPUs free one after another, and a GPU already freed (its worker no longer
 * listed) is part of the drain's progress.
 */
export function gpusHeldBy(samples: readonly (GpuSample | null)[], exited: readonly { pid: number; unit: string | null }[]): GpuRef[] {
  const units = new Set(exited.map((g) => g.unit).filter((u): u is string => u !== null));
  const byUuid = new Map<string, GpuRef>();
  for (const sample of samples) {
    if (!sample) continue;
    for (const gpu of sample.gpus) {
      if (byUuid.has(gpu.uuid)) continue;
      const held = gpu.holders.some(
        (h) =>
          h.usedMiB >= MIN_HOLDER_MIB &&
          (exited.some((x) => x.pid === h.pid && x.unit === h.unit) || (h.kind === "exited" && h.unit !== null && units.has(h.unit))),
      );
      if (held) byUuid.set(gpu.uuid, { uuid: gpu.uuid, index: gpu.index });
    }
  }
  return [...byUuid.values()];
}

/**
 * GPU uuids that `nvidia-smi -i <ids>` / `--id=<ids>` calls in the given command texts select,
 * resolved against the sample (index, uuid or PCI bus id). Undefined when no call selects GPUs
 * or an id does not resolve (a shell variable, a GPU not in the sample): then nothing is assumed.
 */
export function gpusSelectedByNvidiaSmi(texts: readonly string[], sample: GpuSample): string[] | undefined {
  const uuids = new Set<string>();
  for (const text of texts) {
    // Each nvidia-smi call, up to the end of its command (pipe, list, newline).
    for (const call of text.matchAll(/nvidia-smi\b([^|;&\n]*)/g)) {
      for (const id of call[1].matchAll(/(?:^|\s)(?:-i|--id)(?:\s+|=)([^\s'"`)]+)/g)) {
        for (const token of id[1].split(",")) {
          const t = token.trim().toLowerCase();
          const gpu = sample.gpus.find(
            (g) => String(g.index) === t || g.uuid.toLowerCase() === t || (t.includes(":") && g.pciBusId.toLowerCase().endsWith(t.replace(/^0000:/, ""))),
          );
          if (!gpu || t === "") return undefined;
          uuids.add(gpu.uuid);
        }
      }
    }
  }
  return uuids.size > 0 ? [...uuids].sort() : undefined;
}

// ---------------------------------------------------------------------------------------
// Drain rate

/**
 * Memory of a killed process stays at its peak while the process tears down (contexts closing,
 * device memory freed in its exit path) before it drops. A plateau shorter than this after the
 * exit is that teardown, not a sign that the memory will never be freed.
 */
export const DRAIN_TEARDOWN_GRACE_MS = 10_000;

export interface DrainEstimate {
  status: "draining" | "flat" | "growing" | "unknown";
  /** Positive when memory goes down. Absent when unknown. */
  mibPerSecond?: number;
  /** Points and time span the fit used. */
  points: number;
  spanMs: number;
}

/** Fit over at most this much recent history: drains speed up and slow down. */
export const DRAIN_WINDOW_MS = 20_000;
export const DRAIN_MIN_POINTS = 3;
export const DRAIN_MIN_SPAN_MS = 2_000;
/** Slower than this is "not draining": 1 MiB/s frees one GiB in 17 min. */
export const DRAIN_MIN_RATE_MIB_S = 1;

/**
 * Memory on the given GPUs in one sample: memory.used where nvidia-smi reported it, else the
 * holders plus unattributed memory (memory.used is "[N/A]" on some systems). null when a GPU is
 * absent from the sample, so a series never mixes different GPU sets.
 */
export function memoryOn(sample: GpuSample, uuids: readonly string[]): number | null {
  let sum = 0;
  for (const uuid of uuids) {
    const gpu = sample.gpus.find((g) => g.uuid === uuid);
    if (!gpu) return null;
    if (gpu.memoryUsedMiB !== null && Number.isFinite(gpu.memoryUsedMiB)) sum += gpu.memoryUsedMiB;
    else sum += gpu.holders.reduce((s, h) => s + (Number.isFinite(h.usedMiB) ? h.usedMiB : 0), 0) + gpu.unattributedMiB;
  }
  return sum;
}

/** Least-squares slope (units per ms) and its standard error; se is 0 for a perfect line. */
function fitLine(points: readonly { t: number; v: number }[]): { slope: number; se: number } {
  const n = points.length;
  const meanT = points.reduce((s, p) => s + p.t, 0) / n;
  const meanV = points.reduce((s, p) => s + p.v, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.t - meanT) * (p.v - meanV);
    den += (p.t - meanT) ** 2;
  }
  if (den === 0) return { slope: 0, se: 0 };
  const slope = num / den;
  const intercept = meanV - slope * meanT;
  const residual = points.reduce((s, p) => s + (p.v - (intercept + slope * p.t)) ** 2, 0);
  const se = n > 2 ? Math.sqrt(residual / (n - 2) / den) : 0;
  return { slope, se };
}

/** A fitted slope smaller than this many standard errors is noise, not a drain. */
export const DRAIN_MIN_T_STAT = 3;

/**
 * Drain rate of memory on `uuids` from samples taken after `sinceMs` (the exit, when known) and
 * within DRAIN_WINDOW_MS of now. A plateau before the drain began (the dying process tearing
 * down) is cut off: the fit starts at the last sample still at the peak.
 */
export function estimateDrain(samples: readonly GpuSample[], uuids: readonly string[], sinceMs: number | null, nowMs: number): DrainEstimate {
  const from = Math.max(sinceMs ?? -Infinity, nowMs - DRAIN_WINDOW_MS);
  const byTime = new Map<number, number>();
  for (const sample of samples) {
    if (sample.atMs < from || sample.atMs > nowMs) continue;
    const value = memoryOn(sample, uuids);
    if (value !== null) byTime.set(sample.atMs, value);
  }
  const points = [...byTime.entries()].map(([t, v]) => ({ t, v })).sort((a, b) => a.t - b.t);
  const span = (ps: { t: number }[]) => (ps.length > 0 ? ps[ps.length - 1].t - ps[0].t : 0);
  if (points.length < DRAIN_MIN_POINTS || span(points) < DRAIN_MIN_SPAN_MS) {
    return { status: "unknown", points: points.length, spanMs: span(points) };
  }
  const peak = Math.max(...points.map((p) => p.v));
  const tolerance = Math.max(64, peak * 0.002);
  let start = 0;
  for (let i = 0; i < points.length; i++) if (points[i].v >= peak - tolerance) start = i;
  const tail = points.slice(start);
  const used = tail.length >= DRAIN_MIN_POINTS && span(tail) >= DRAIN_MIN_SPAN_MS ? tail : points;
  const fit = fitLine(used);
  const mibPerSecond = -fit.slope * 1000;
  const significant = fit.se === 0 || Math.abs(fit.slope) / fit.se >= DRAIN_MIN_T_STAT;
  const status = !significant || Math.abs(mibPerSecond) < DRAIN_MIN_RATE_MIB_S ? "flat" : mibPerSecond > 0 ? "draining" : "growing";
  return { status, mibPerSecond, points: used.length, spanMs: span(used) };
}
