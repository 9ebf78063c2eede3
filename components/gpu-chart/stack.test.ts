import { describe, expect, it } from "vitest";
import type { GpuSample } from "@/server/contract/types";
import { gpu, H200_TOTAL_MIB, holder, incidentDay } from "./fixtures";
import { MEMORY_CLASSES, StackCache, gpuList, stackMemory, unitGpuUuids } from "./stack";

const T0 = Date.UTC(2025, 0, 12, 12, 0, 0);
const U = "vllm.service";
const at = (s: number) => T0 + s * 1000;

function sample(s: number, gpus: GpuSample["gpus"]): GpuSample {
  return { atMs: at(s), gpus };
}

const idx = (name: string) => MEMORY_CLASSES.indexOf(name as never);

describe("stackMemory", () => {
  it("splits one GPU's memory by holder class and stacks it bottom-up", () => {
    const samples = [
      sample(0, [
        gpu(0, [holder("unit", U, 1000), holder("exited", U, 200), holder("unit", "other.service", 300), holder("outside", null, 50)], { unattributedMiB: 25 }),
      ]),
    ];
    const r = stackMemory(samples, { unit: U, mode: "per-gpu", gpuUuid: "GPU-0", fromMs: at(0), toMs: at(10) });
    expect(r.xs).toEqual([at(0) / 1000]);
    expect(r.raw.map((a) => a[0])).toEqual([1000, 200, 300, 75]); // outside includes the unattributed rest
    expect(r.cumulative.map((a) => a[0])).toEqual([1000, 1200, 1500, 1575]);
    expect(r.total).toEqual([H200_TOTAL_MIB]);
    expect(r.used).toEqual([1575]);
  });

  it("sums the unit's GPUs in sum mode and picks them by default", () => {
    const samples = [
      sample(0, [gpu(0, [holder("unit", U, 1000)]), gpu(1, [holder("unit", U, 2000)]), gpu(2, [holder("unit", "other.service", 5000)])]),
      sample(1, [gpu(0, [holder("exited", U, 800)]), gpu(1, [holder("unit", U, 2000)]), gpu(2, [holder("unit", "other.service", 5000)])]),
    ];
    expect(unitGpuUuids(samples, U).sort()).toEqual(["GPU-0", "GPU-1"]);
    const r = stackMemory(samples, { unit: U, mode: "sum", fromMs: at(0), toMs: at(1) });
    expect(r.gpuUuids.sort()).toEqual(["GPU-0", "GPU-1"]);
    expect(r.fellBackToAllGpus).toBe(false);
    expect(r.raw[idx("this")]).toEqual([3000, 2000]);
    expect(r.raw[idx("exited")]).toEqual([0, 800]);
    expect(r.raw[idx("other")]).toEqual([0, 0]);
    expect(r.total).toEqual([2 * H200_TOTAL_MIB, 2 * H200_TOTAL_MIB]);
  });

  it("shows the first GPU the unit holds in per-GPU mode when none is chosen", () => {
    const samples = [sample(0, [gpu(0, [holder("unit", "other.service", 10)]), gpu(1, []), gpu(2, [holder("unit", U, 30)]), gpu(3, [holder("unit", U, 40)])])];
    expect(stackMemory(samples, { unit: U, mode: "per-gpu", fromMs: at(0), toMs: at(1) }).gpuUuids).toEqual(["GPU-2"]);
    expect(stackMemory(samples, { unit: "none.service", mode: "per-gpu", fromMs: at(0), toMs: at(1) }).gpuUuids).toEqual(["GPU-0"]);
  });

  it("falls back to all GPUs when the unit held none in the window", () => {
    const samples = [sample(0, [gpu(0, [holder("unit", "other.service", 10)]), gpu(1, [])])];
    const r = stackMemory(samples, { unit: U, mode: "sum", fromMs: at(0), toMs: at(1) });
    expect(r.fellBackToAllGpus).toBe(true);
    expect(r.gpuUuids.sort()).toEqual(["GPU-0", "GPU-1"]);
    expect(r.raw[idx("other")]).toEqual([10]);
  });

  it("turns a missing memory reading with no per-process numbers into a gap, never 0", () => {
    const samples = [
      sample(0, [gpu(0, [holder("unit", U, 1000)])]),
      sample(1, [gpu(0, [], { memoryUsedMiB: null, memoryTotalMiB: H200_TOTAL_MIB })]),
      sample(2, [gpu(0, [holder("unit", U, 1000)])]),
    ];
    const r = stackMemory(samples, { unit: U, mode: "per-gpu", gpuUuid: "GPU-0", fromMs: at(0), toMs: at(2) });
    expect(r.xs).toEqual([at(0) / 1000, at(1) / 1000, at(2) / 1000]);
    for (const series of [...r.raw, ...r.cumulative, r.total, r.used]) expect(series[1]).toBeNull();
    expect(r.raw[idx("this")]![2]).toBe(1000);
  });

  it("uses per-process numbers when only memory.used/total are not reported (GB10)", () => {
    const samples = [sample(0, [gpu(0, [holder("unit", U, 4096)], { memoryUsedMiB: null, memoryTotalMiB: null, unattributedMiB: 0 })])];
    const r = stackMemory(samples, { unit: U, mode: "per-gpu", gpuUuid: "GPU-0", fromMs: at(0), toMs: at(1) });
    expect(r.raw[idx("this")]).toEqual([4096]);
    expect(r.total).toEqual([null]);
    expect(r.used).toEqual([null]);
  });

  it("treats a GPU missing from a sample as unknown in sum mode", () => {
    const samples = [
      sample(0, [gpu(0, [holder("unit", U, 1000)]), gpu(1, [holder("unit", U, 1000)])]),
      sample(1, [gpu(0, [holder("unit", U, 1000)])]), // GPU-1 fell off the bus
    ];
    const r = stackMemory(samples, { unit: U, mode: "sum", gpuUuids: ["GPU-0", "GPU-1"], fromMs: at(0), toMs: at(1) });
    expect(r.raw[idx("this")]).toEqual([2000, null]);
  });

  it("breaks the line where sampling paused", () => {
    const samples = [0, 1, 2, 3, 60, 61].map((s) => sample(s, [gpu(0, [holder("unit", U, 100)])]));
    const r = stackMemory(samples, { unit: U, mode: "per-gpu", gpuUuid: "GPU-0", fromMs: at(0), toMs: at(61) });
    expect(r.xs).toHaveLength(7);
    expect(r.raw[0]).toEqual([100, 100, 100, 100, null, 100, 100]);
    expect(r.xs[4]).toBeGreaterThan(at(3) / 1000);
    expect(r.xs[4]).toBeLessThan(at(60) / 1000);
  });

  it("includes one sample either side of the window so areas reach its edges", () => {
    const samples = [0, 10, 20, 30].map((s) => sample(s, [gpu(0, [holder("unit", U, s)])]));
    const r = stackMemory(samples, { unit: U, mode: "per-gpu", gpuUuid: "GPU-0", fromMs: at(15), toMs: at(25), gapMs: 60_000 });
    expect(r.raw[0]).toEqual([10, 20, 30]);
  });

  it("sorts unsorted input", () => {
    const samples = [2, 0, 1].map((s) => sample(s, [gpu(0, [holder("unit", U, s)])]));
    const r = stackMemory(samples, { unit: U, mode: "per-gpu", gpuUuid: "GPU-0", fromMs: at(0), toMs: at(2) });
    expect(r.raw[0]).toEqual([0, 1, 2]);
  });

  describe("downsampling a day at 1 Hz to pixel columns", () => {
    const day = incidentDay({ startMs: T0, seconds: 86_400, gpus: 8, unit: U, killAtS: 80_000 });
    const opts = { unit: U, mode: "sum" as const, fromMs: T0, toMs: T0 + 86_400_000, pixels: 1000 };

    it("keeps at most 5 real samples per column", () => {
      const r = stackMemory(day, opts);
      expect(r.sourcePoints).toBe(86_400);
      expect(r.xs.length).toBeLessThanOrEqual(5 * 1002);
      expect(r.xs.length).toBeGreaterThan(1000);
      let increasing = true;
      for (let i = 1; i < r.xs.length; i++) if (!(r.xs[i]! > r.xs[i - 1]!)) increasing = false;
      expect(increasing).toBe(true);
    });

    it("keeps the stack consistent and the extremes of the top edge", () => {
      const full = stackMemory(day, { ...opts, pixels: 0 });
      const r = stackMemory(day, opts);
      const topIdx = MEMORY_CLASSES.length - 1;
      const fullTop = full.cumulative[topIdx]!.filter((v): v is number => v != null);
      const dsTop = r.cumulative[topIdx]!.filter((v): v is number => v != null);
      expect(Math.max(...dsTop)).toBe(Math.max(...fullTop));
      expect(Math.min(...dsTop)).toBe(Math.min(...fullTop));
      // every downsampled row is an actual sample of the full series
      const byX = new Map(full.xs.map((x, i) => [x, i]));
      for (let i = 0; i < r.xs.length; i += 97) {
        const j = byX.get(r.xs[i]!)!;
        expect(j).toBeDefined();
        for (let k = 0; k < MEMORY_CLASSES.length; k++) expect(r.cumulative[k]![i]).toBe(full.cumulative[k]![j]);
      }
    });

    it("keeps the peak of exited-process memory (the 30 s drain) in a 24 h view", () => {
      const full = stackMemory(day, { ...opts, pixels: 0 });
      const r = stackMemory(day, opts);
      const peak = (a: (number | null)[]) => a.reduce<number>((m, v) => (v != null && v > m ? v : m), 0);
      expect(peak(full.raw[idx("exited")]!)).toBeGreaterThan(4 * 70_000); // 4 GPUs × ~70 GiB at the kill
      expect(peak(r.raw[idx("exited")]!)).toBe(peak(full.raw[idx("exited")]!));
    });
  });
});

describe("StackCache", () => {
  it("gives the same result as a fresh computation after appends, trimming, zoom and mode changes", () => {
    const all = incidentDay({ startMs: T0, seconds: 600, gpus: 4, unit: U, killAtS: 300 });
    const cache = new StackCache();
    const check = (samples: GpuSample[], o: Parameters<typeof stackMemory>[1]) => {
      expect(stackMemory(samples, o, cache)).toEqual(stackMemory(samples, o));
    };
    const sum = { unit: U, mode: "sum" as const, fromMs: at(0), toMs: at(400), pixels: 50 };
    check(all.slice(0, 400), sum);
    check(all.slice(0, 401), { ...sum, fromMs: at(1), toMs: at(401) }); // one new sample
    check(all.slice(100, 500), { ...sum, fromMs: at(100), toMs: at(500) }); // old ones trimmed, new ones added
    check(all.slice(100, 500), { ...sum, fromMs: at(290), toMs: at(340) }); // zoomed in
    check(all.slice(100, 500), { unit: U, mode: "per-gpu", gpuUuid: "GPU-3", fromMs: at(100), toMs: at(500) });
    check(all.slice(100, 500), { ...sum, unit: "other.service", fromMs: at(100), toMs: at(500) }); // another unit
    // a replaced sample object (same time, new content) is recomputed, not taken from the cache
    const replaced = all.slice(100, 500);
    replaced[250] = { atMs: replaced[250]!.atMs, gpus: replaced[250]!.gpus.map((g) => gpu(g.index!, [holder("outside", null, 7)])) };
    check(replaced, { ...sum, fromMs: at(100), toMs: at(500), pixels: 0 });
    expect(unitGpuUuids(replaced, U, -Infinity, Infinity, cache).sort()).toEqual(unitGpuUuids(replaced, U).sort());
  });
});

describe("StackCache reuse", () => {
  it("reads each sample object once: later calls take its record from the cache", () => {
    const samples = [0, 1, 2].map((s) => sample(s, [gpu(0, [holder("unit", U, 100)])]));
    const cache = new StackCache();
    const o = { unit: U, mode: "per-gpu" as const, gpuUuid: "GPU-0", fromMs: at(0), toMs: at(2) };
    expect(stackMemory(samples, o, cache).raw[0]).toEqual([100, 100, 100]);
    // Samples are immutable by contract; mutating one shows whether the cache was used.
    samples[1]!.gpus[0]!.holders[0]!.usedMiB = 999;
    expect(stackMemory(samples, o, cache).raw[0]).toEqual([100, 100, 100]);
    expect(stackMemory(samples, o).raw[0]).toEqual([100, 999, 100]);
    // a new array holding the same objects plus a new one still reuses them
    const next = [...samples.slice(1), sample(3, [gpu(0, [holder("unit", U, 5)])])];
    expect(stackMemory(next, { ...o, fromMs: at(1), toMs: at(3) }, cache).raw[0]).toEqual([100, 100, 5]);
  });
});

describe("gpuList", () => {
  it("lists GPUs of the latest sample by index", () => {
    const samples = [sample(0, [gpu(1, []), gpu(0, [])])];
    expect(gpuList(samples).map((g) => g.uuid)).toEqual(["GPU-0", "GPU-1"]);
    expect(gpuList([])).toEqual([]);
  });
});
