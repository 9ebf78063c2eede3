import { describe, expect, it } from "vitest";
import { analyseContention, estimateDrain, gpusSelectedByNvidiaSmi, gpusUsedByUnit, memoryOn } from "./gpu";
import { GIB, NOW, UNIT, ago, gpu, gpuUuid, holder, sample, series } from "./fixtures";

/** Memory on GPU 0 as a function of seconds before NOW. */
const on0 = (mibAt: (secondsAgo: number) => number) => series(20, 0, (at) => [gpu(0, { holders: [holder("exited", 1, mibAt((NOW - at) / 1000))] })]);
const uuids0 = [gpuUuid(0)];
// Deterministic jitter of a few hundred MiB, like a neighbour's allocator breathing.
const jitter = (s: number) => Math.round(Math.sin(s * 2.3) * 300 + Math.cos(s * 5.1) * 150);

describe("estimateDrain", () => {
  it("recovers a steady drain exactly", () => {
    const d = estimateDrain(
      on0((s) => 100 * GIB - (20 - s) * 3000),
      uuids0,
      null,
      NOW,
    );
    expect(d.status).toBe("draining");
    expect(d.mibPerSecond).toBeCloseTo(3000, 6);
    expect(d.points).toBe(21);
  });

  it("a drain with jitter is still a drain at about the right rate", () => {
    const d = estimateDrain(
      on0((s) => 100 * GIB - (20 - s) * 3000 + jitter(s)),
      uuids0,
      null,
      NOW,
    );
    expect(d.status).toBe("draining");
    expect(d.mibPerSecond).toBeGreaterThan(2800);
    expect(d.mibPerSecond).toBeLessThan(3200);
  });

  it("flat memory with jitter is not a drain", () => {
    const d = estimateDrain(
      on0((s) => 100 * GIB + jitter(s)),
      uuids0,
      null,
      NOW,
    );
    expect(d.status).toBe("flat");
  });

  it("exactly flat memory is flat", () => {
    expect(
      estimateDrain(
        on0(() => 100 * GIB),
        uuids0,
        null,
        NOW,
      ).status,
    ).toBe("flat");
  });

  it("growing memory is 'growing'", () => {
    expect(
      estimateDrain(
        on0((s) => 10 * GIB + (20 - s) * 500),
        uuids0,
        null,
        NOW,
      ).status,
    ).toBe("growing");
  });

  it("only uses samples after the exit and within the window", () => {
    // drained fast long ago, slow in the last 5 s: the exit 5 s ago bounds the fit
    const samples = on0((s) => (s > 5 ? 100 * GIB - (20 - s) * 5000 : 100 * GIB - 15 * 5000 - (5 - s) * 100));
    const d = estimateDrain(samples, uuids0, ago(5), NOW);
    expect(d.mibPerSecond).toBeCloseTo(100, 6);
  });

  it("unknown with too few points or too short a span", () => {
    expect(estimateDrain(on0(() => GIB).slice(-2), uuids0, null, NOW).status).toBe("unknown");
    const dense = [0, 300, 600, 900].map((ms) => sample(NOW - ms, [gpu(0, { holders: [holder("exited", 1, 1000 + ms)] })]));
    expect(estimateDrain(dense, uuids0, null, NOW)).toMatchObject({ status: "unknown", points: 4, spanMs: 900 });
  });

  it("skips samples that lack one of the GPUs rather than mixing GPU sets", () => {
    const a = sample(ago(1), [gpu(0, { holders: [holder("exited", 1, 5000)] })]);
    expect(memoryOn(a, [gpuUuid(0), gpuUuid(1)])).toBeNull();
  });

  it("ignores samples from the future and duplicate timestamps", () => {
    const s = on0((x) => 100 * GIB - (20 - x) * 1000);
    const withDupes = [...s, s[s.length - 1], sample(NOW + 5000, [gpu(0, { holders: [holder("exited", 1, 0)] })])];
    expect(estimateDrain(withDupes, uuids0, null, NOW).points).toBe(21);
  });
});

describe("analyseContention", () => {
  it("groups holders per process across GPUs and sorts the biggest first", () => {
    const s = sample(NOW, [
      gpu(0, { holders: [holder("exited", 10, 1000, { exitedAtMs: ago(9), unit: "old.service" }), holder("unit", 20, 5000, { unit: "b.service" })] }),
      gpu(1, { holders: [holder("exited", 10, 3000, { exitedAtMs: ago(7), unit: "old.service" })] }),
    ]);
    const c = analyseContention(UNIT, s, [], undefined);
    expect(c.gpuSource).toBe("all");
    expect(c.exited).toHaveLength(1);
    expect(c.exited[0]).toMatchObject({ pid: 10, mib: 4000, exitedAtMs: ago(9) });
    expect(c.exited[0].gpus.map((g) => g.index)).toEqual([0, 1]);
    expect(c.otherUnits[0]).toMatchObject({ pid: 20, unit: "b.service", mib: 5000 });
    expect(c.totalHeldMiB).toBe(9000);
    expect(c.usedMiB).toBe(9000);
  });

  it("reports needed GPUs missing from the sample", () => {
    const c = analyseContention(UNIT, sample(NOW, [gpu(0)]), [], [gpuUuid(0), gpuUuid(3)]);
    expect(c.gpuSource).toBe("given");
    expect(c.missing).toEqual([gpuUuid(3)]);
  });

  it("ignores small unattributed driver overhead", () => {
    const c = analyseContention(UNIT, sample(NOW, [gpu(0, { unattributedMiB: 60 }), gpu(1, { unattributedMiB: 4096 })]), [], undefined);
    expect(c.unattributed.mib).toBe(4096);
    expect(c.unattributed.gpus.map((g) => g.index)).toEqual([1]);
  });
});

describe("gpusUsedByUnit", () => {
  it("finds GPUs where the unit's live or exited processes held memory", () => {
    const samples = [
      sample(ago(30), [gpu(0, { holders: [holder("unit", 1, 100)] }), gpu(1), gpu(2, { holders: [holder("unit", 2, 100, { unit: "other.service" })] })]),
      sample(ago(10), [gpu(0), gpu(1, { holders: [holder("exited", 1, 100)] }), gpu(2)]),
      null,
    ];
    expect(gpusUsedByUnit(UNIT, samples)).toEqual([gpuUuid(0), gpuUuid(1)]);
    expect(gpusUsedByUnit("nothing.service", samples)).toEqual([]);
  });
});

describe("gpusSelectedByNvidiaSmi", () => {
  const eight = sample(
    NOW,
    Array.from({ length: 8 }, (_, i) => gpu(i)),
  );

  it("reads -i / --id from inline polls and nvidia-smi command lines", () => {
    const inline = `/bin/sh -c while [ "$(nvidia-smi -i 5 --query-gpu=memory.used --format=csv,noheader,nounits)" -gt 1000 ]; do sleep 1; done`;
    expect(gpusSelectedByNvidiaSmi([inline], eight)).toEqual([gpuUuid(5)]);
    expect(gpusSelectedByNvidiaSmi(["nvidia-smi --id=0,1 --query-gpu=memory.used --format=csv"], eight)).toEqual([gpuUuid(0), gpuUuid(1)]);
    expect(gpusSelectedByNvidiaSmi([`nvidia-smi -i ${gpuUuid(3)} --query-gpu=memory.used`], eight)).toEqual([gpuUuid(3)]);
    expect(gpusSelectedByNvidiaSmi(["nvidia-smi -i 00000000:1A:00.0 -q"], eight)).toEqual([gpuUuid(2)]);
  });

  it("assumes nothing when it cannot tell", () => {
    expect(gpusSelectedByNvidiaSmi(["nvidia-smi --query-gpu=memory.used --format=csv"], eight)).toBeUndefined();
    expect(gpusSelectedByNvidiaSmi(['nvidia-smi -i "$GPU" --query-gpu=memory.used'], eight)).toBeUndefined();
    expect(gpusSelectedByNvidiaSmi(["nvidia-smi -i 9 --query-gpu=memory.used"], eight)).toBeUndefined();
    // an -i that belongs to the next command in a pipe
    expect(gpusSelectedByNvidiaSmi(["nvidia-smi --query-gpu=memory.used --format=csv | grep -i 4"], eight)).toBeUndefined();
    expect(gpusSelectedByNvidiaSmi(["/usr/local/bin/wait-gpu-free 0,1 1000"], eight)).toBeUndefined();
  });
});
