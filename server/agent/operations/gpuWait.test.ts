import { describe, expect, it } from "vitest";
import type { GpuAttributed, GpuHolder, GpuSample } from "../../contract/types";
import { GpuWait } from "./gpuWait";
import { captureLastRun, foreignHolders } from "./lastRun";

const UNIT = "vllm-a.service";
const U0 = "GPU-0000";
const U1 = "GPU-1111";

function holder(kind: GpuHolder["kind"], pid: number, usedMiB: number, unit: string | null = UNIT, extra: Partial<GpuHolder> = {}): GpuHolder {
  return { kind, pid, unit, processName: "python3", cmdline: ["python3", "serve.py"], state: kind === "exited" ? "gone" : "sleeping", usedMiB, ...extra };
}

function gpu(uuid: string, index: number, holders: GpuHolder[], unattributedMiB = 0, used: number | null = 0): GpuAttributed {
  const listed = holders.reduce((s, h) => s + h.usedMiB, 0);
  return {
    uuid,
    index,
    name: "H200",
    pciBusId: "",
    memoryTotalMiB: used === null ? null : 143771,
    memoryUsedMiB: used === null ? null : listed + unattributedMiB,
    utilizationPct: 0,
    temperatureC: 30,
    powerW: 70,
    holders,
    unattributedMiB,
  };
}

const at = (atMs: number, gpus: GpuAttributed[], extra: Partial<GpuSample> = {}): GpuSample => ({ atMs, gpus, ...extra });

describe("captureLastRun", () => {
  it("takes the unit's GPUs and PIDs from the latest sample, live and exited, with each GPU's baseline", () => {
    const latest = at(1000, [
      gpu(U0, 0, [holder("unit", 10, 4000), holder("outside", 99, 100, null)], 3),
      gpu(U1, 1, [holder("exited", 11, 2000)], 7),
      gpu("GPU-2", 2, []),
    ]);
    const run = captureLastRun(UNIT, latest, []);
    expect(run.gpus).toEqual([
      { uuid: U0, index: 0 },
      { uuid: U1, index: 1 },
    ]);
    expect([...run.pids]).toEqual([10, 11]);
    expect(run.baselineMiB.get(U0)).toBe(3);
    expect(run.heldMiB).toBe(6000);
    expect(run.pool).toBeNull();
  });

  it("a unit not on a GPU now: the GPUs it was last seen on in the history", () => {
    const history = [at(1, [gpu(U0, 0, [holder("unit", 0, 500)]), gpu(U1, 1, [])]), at(2, [gpu(U0, 0, []), gpu(U1, 1, [holder("unit", 0, 800)])])];
    expect(captureLastRun(UNIT, at(3, [gpu(U0, 0, []), gpu(U1, 1, [])]), history).gpus).toEqual([{ uuid: U1, index: 1 }]);
    expect(captureLastRun(UNIT, null, []).gpus).toEqual([]);
  });

  it("foreign holders: outside any unit or in another unit, any amount, [N/A] as null — never the unit's own", () => {
    const run = { gpus: [{ uuid: U0, index: 0 }], pids: new Set([10]) };
    const s = at(1, [
      gpu(U0, 0, [
        holder("unit", 10, 4000),
        holder("outside", 20, 1, null),
        holder("unit", 30, 0, "other.service", { usedMiBUnknown: true }),
        holder("exited", 40, 50, "other.service"),
      ]),
      gpu(U1, 1, [holder("outside", 50, 9000, null)]),
    ]);
    expect(foreignHolders(UNIT, run, s).map((f) => [f.pid, f.unit, f.usedMiB])).toEqual([
      [20, null, 1],
      [30, "other.service", null],
    ]);
  });
});

describe("GpuWait: when the last run's memory is released", () => {
  const run = () => captureLastRun(UNIT, at(0, [gpu(U0, 0, [holder("unit", 10, 4000)], 5)]), []);

  it("waits while the process lives, then while it is an exited holder; free after two clean samples", () => {
    const w = new GpuWait(UNIT, run());
    const live = w.observe(at(1000, [gpu(U0, 0, [holder("unit", 10, 4000)], 5)]));
    expect(live).toMatchObject({ ready: false, heldMiB: 4000, pids: [10] });
    expect(live.message).toBe("3.9 GiB still held on GPU 0 by live PIDs 10.");
    const exited = w.observe(at(2000, [gpu(U0, 0, [holder("exited", 10, 4000)], 5)]));
    expect(exited).toMatchObject({ ready: false, heldMiB: 4000, pids: [10] });
    expect(exited.gpus[0]).toMatchObject({ exitedPids: [10], pids: [] });
    expect(exited.message).toMatch(/by exited PIDs 10/);
    expect(w.observe(at(3000, [gpu(U0, 0, [], 5)])).ready).toBe(false); // one clean sample is not enough
    const free = w.observe(at(4000, [gpu(U0, 0, [], 5)]));
    expect(free).toMatchObject({ ready: true, heldMiB: 0, pids: [] });
    expect(free.message).toBe("The unit's memory on GPU 0 is released.");
  });

  it("memory no process explains: waits while it drains, starts once it stops falling (reported as stuck)", () => {
    const w = new GpuWait(UNIT, run(), { settleMs: 3000, settleSamples: 3, toleranceMiB: 64 });
    // the exited holder aged out of attribution, the memory still drains: 5 MiB baseline + extra
    const draining = [40_000, 30_000, 20_000, 12_000, 12_010, 12_020, 12_000, 12_005];
    const results = draining.map((extra, i) => w.observe(at(1000 * (i + 1), [gpu(U0, 0, [], 5 + extra)])));
    expect(results.slice(0, 5).every((r) => !r.ready)).toBe(true);
    expect(results[2]!.message).toMatch(/not explained by any process yet; waiting for it to drain/);
    expect(results[2]!.gpus[0]!.unexplainedMiB).toBe(20_000);
    const firstReady = results.findIndex((r) => r.ready);
    expect(firstReady).toBeGreaterThanOrEqual(6);
    expect(results[firstReady]!.message).toMatch(/held by no process and no longer draining/);
  });

  it("back at the baseline within the tolerance is free without waiting for a settle window", () => {
    const w = new GpuWait(UNIT, run());
    w.observe(at(1000, [gpu(U0, 0, [], 5 + 60)]));
    expect(w.observe(at(2000, [gpu(U0, 0, [], 5 + 60)])).ready).toBe(true);
  });

  it("a foreign process, a new process of the unit, or a missing GPU is never 'free'", () => {
    const w = new GpuWait(UNIT, run());
    const f = w.observe(at(1000, [gpu(U0, 0, [holder("outside", 77, 10, null)], 5)]));
    expect(f.foreign.map((x) => x.pid)).toEqual([77]);
    expect(f.message).toBe("PID 77 (outside any unit) holds 10 MiB on GPU 0.");
    const n = new GpuWait(UNIT, run()).observe(at(1000, [gpu(U0, 0, [holder("unit", 12, 300)], 5)]));
    expect(n.newPids).toEqual([12]);
    const m = new GpuWait(UNIT, run());
    m.observe(at(1000, []));
    expect(m.observe(at(2000, [])).ready).toBe(false);
  });

  it("unified memory: after the processes are gone, waits for MemAvailable to recover what they held", () => {
    const pool = (availableMiB: number) => ({ memoryPool: { totalMiB: 120_000, availableMiB, unified: true as const } });
    const r = captureLastRun(UNIT, at(0, [gpu(U0, 0, [holder("unit", 10, 60_000)], 0, null)], pool(40_000)), []);
    expect(r.pool).toEqual({ availableBeforeMiB: 40_000, expectedFreeMiB: 60_000 });
    const w = new GpuWait(UNIT, r, { settleMs: 3000 });
    expect(w.observe(at(1000, [gpu(U0, 0, [], 0, null)], pool(50_000)))).toMatchObject({ ready: false, heldMiB: 50_000 });
    const mid = w.observe(at(2000, [gpu(U0, 0, [], 0, null)], pool(80_000)));
    expect(mid.message).toMatch(/waiting for MemAvailable to recover \(78 GiB of 117 GiB available\)/);
    w.observe(at(3000, [gpu(U0, 0, [], 0, null)], pool(99_900)));
    const back = w.observe(at(4000, [gpu(U0, 0, [], 0, null)], pool(99_950)));
    expect(back).toMatchObject({ ready: true, heldMiB: 50 });
  });
});
