import { describe, expect, it } from "vitest";
import type { ComputeApp, GpuRawSample, GpuReading, GpuSample, ProcState } from "../../contract/types";
import type { ProcAdapter } from "../adapter";
import { GpuAttributor } from "./attribution";

const GPU = "GPU-5e1f0c2a-7b3d-4e8f-9a01-000000000001";
const GPU2 = "GPU-5e1f0c2a-7b3d-4e8f-9a01-000000000002";

/** A process table the test edits between samples. */
class FakeProcs implements ProcAdapter {
  table = new Map<number, { state: ProcState; cmdline: string[]; unit: string | null; startedAtMs?: number }>();
  calls = 0;
  set(pid: number, unit: string | null, state: ProcState = "sleeping", startedAtMs = 1000, cmdline = ["python3", "-m", "vllm"]) {
    this.table.set(pid, { state, cmdline, unit, startedAtMs });
  }
  kill(pid: number) {
    this.table.delete(pid);
  }
  async inspect(pid: number) {
    this.calls++;
    const p = this.table.get(pid);
    if (!p) return { info: { pid, state: "gone" as const, cmdline: [] }, unit: null };
    return { info: { pid, state: p.state, cmdline: p.cmdline, startedAtMs: p.startedAtMs }, unit: p.unit };
  }
}

function gpu(uuid: string, usedMiB: number | null, totalMiB: number | null = 143771): GpuReading {
  return {
    uuid,
    index: uuid === GPU ? 0 : 1,
    name: "NVIDIA H200",
    pciBusId: "00000000:18:00.0",
    memoryTotalMiB: totalMiB,
    memoryUsedMiB: usedMiB,
    utilizationPct: 0,
    temperatureC: 30,
    powerW: 70,
  };
}

function app(pid: number, usedMiB: number | null, uuid = GPU, processName = "python3"): ComputeApp {
  return { gpuUuid: uuid, pid, processName, usedMiB };
}

function raw(atMs: number, gpus: GpuReading[], apps: ComputeApp[] | null): GpuRawSample {
  return { atMs, gpus, apps };
}

const only = (s: GpuSample, uuid = GPU) => s.gpus.find((g) => g.uuid === uuid)!;

describe("GpuAttributor", () => {
  it("live holders: in a unit, outside any unit; the rest is unattributed", async () => {
    const procs = new FakeProcs();
    procs.set(100, "vllm-kimi.service");
    procs.set(200, null, "running", 1000, ["python3", "notebook.py"]);
    const a = new GpuAttributor(procs);
    const s = await a.attribute(raw(1000, [gpu(GPU, 10_500)], [app(100, 8000, GPU, "VLLM::EngineCore"), app(200, 2000)]));
    const g = only(s);
    expect(g.holders).toEqual([
      {
        kind: "unit",
        pid: 100,
        unit: "vllm-kimi.service",
        processName: "VLLM::EngineCore",
        cmdline: ["python3", "-m", "vllm"],
        state: "sleeping",
        usedMiB: 8000,
      },
      { kind: "outside", pid: 200, unit: null, processName: "python3", cmdline: ["python3", "notebook.py"], state: "running", usedMiB: 2000 },
    ]);
    expect(g.unattributedMiB).toBe(500);
    // the reading itself is passed through
    expect(g).toMatchObject({ memoryUsedMiB: 10_500, memoryTotalMiB: 143771, name: "NVIDIA H200" });
  });

  it("a listed pid that is a zombie or gone is an exited holder, since it was last seen alive", async () => {
    const procs = new FakeProcs();
    procs.set(100, "vllm.service");
    procs.set(101, "vllm.service", "uninterruptible");
    const a = new GpuAttributor(procs);
    await a.attribute(raw(1000, [gpu(GPU, 9000)], [app(100, 6000), app(101, 3000)]));
    procs.set(100, "vllm.service", "zombie", 1000, []);
    procs.kill(101);
    const s = await a.attribute(raw(2000, [gpu(GPU, 9000)], [app(100, 6000), app(101, 3000)]));
    const g = only(s);
    expect(g.holders.map((h) => [h.pid, h.kind, h.state, h.unit, h.exitedAtMs, h.usedMiB, h.cmdline])).toEqual([
      [100, "exited", "zombie", "vllm.service", 1000, 6000, ["python3", "-m", "vllm"]],
      [101, "exited", "gone", "vllm.service", 1000, 3000, ["python3", "-m", "vllm"]],
    ]);
    expect(g.unattributedMiB).toBe(0);
    // a pid we never saw alive: exited since it was first seen dead
    const b = new GpuAttributor(procs);
    const s2 = await b.attribute(raw(5000, [gpu(GPU, 3000)], [app(101, 3000)]));
    expect(only(s2).holders[0]).toMatchObject({ kind: "exited", exitedAtMs: 5000, unit: null });
  });

  it("the incident: a killed holder vanishes from the list, its memory drains, shown as exited until released", async () => {
    const procs = new FakeProcs();
    procs.set(4242, "vllm-kimi-k25.service");
    const a = new GpuAttributor(procs);
    await a.attribute(raw(1000, [gpu(GPU, 130_000)], [app(4242, 130_000, GPU, "VLLM::EngineCore")]));
    await a.attribute(raw(2000, [gpu(GPU, 130_000)], [app(4242, 130_000, GPU, "VLLM::EngineCore")]));
    procs.kill(4242); // SIGKILL; the driver frees the memory later

    const t3 = only(await a.attribute(raw(3000, [gpu(GPU, 130_000)], [])));
    expect(t3.holders).toEqual([
      {
        kind: "exited",
        pid: 4242,
        unit: "vllm-kimi-k25.service",
        processName: "VLLM::EngineCore",
        cmdline: ["python3", "-m", "vllm"],
        state: "gone",
        usedMiB: 130_000,
        exitedAtMs: 2000,
      },
    ]);
    expect(t3.unattributedMiB).toBe(0);

    // the restarted unit's new process starts while the old memory still drains
    procs.set(5000, "vllm-kimi-k25.service", "running", 3500);
    const t4 = only(await a.attribute(raw(4000, [gpu(GPU, 62_000)], [app(5000, 2000)])));
    expect(t4.holders.map((h) => [h.kind, h.pid, h.usedMiB])).toEqual([
      ["unit", 5000, 2000],
      ["exited", 4242, 60_000],
    ]);
    expect(t4.unattributedMiB).toBe(0);

    // released: the exited holder disappears for good
    const t5 = only(await a.attribute(raw(5000, [gpu(GPU, 2005)], [app(5000, 2000)])));
    expect(t5.holders.map((h) => h.kind)).toEqual(["unit"]);
    expect(t5.unattributedMiB).toBe(5);
    // memory that appears later is not blamed on the long-gone holder
    const t6 = only(await a.attribute(raw(6000, [gpu(GPU, 50_000)], [app(5000, 2000)])));
    expect(t6.holders.map((h) => h.kind)).toEqual(["unit"]);
    expect(t6.unattributedMiB).toBe(48_000);
  });

  it("memory that was unexplained before the departure stays unattributed (baseline)", async () => {
    const procs = new FakeProcs();
    procs.set(7, "a.service");
    const a = new GpuAttributor(procs);
    await a.attribute(raw(1000, [gpu(GPU, 4500)], [app(7, 4000)]));
    procs.kill(7);
    const g = only(await a.attribute(raw(2000, [gpu(GPU, 4500)], [])));
    expect(g.holders.map((h) => [h.kind, h.usedMiB])).toEqual([["exited", 4000]]);
    expect(g.unattributedMiB).toBe(500);
  });

  it("a holder that freed its memory and lives on is not an exited holder", async () => {
    const procs = new FakeProcs();
    procs.set(7, "a.service");
    const a = new GpuAttributor(procs);
    await a.attribute(raw(1000, [gpu(GPU, 4000)], [app(7, 4000)]));
    const g = only(await a.attribute(raw(2000, [gpu(GPU, 4000)], [])));
    expect(g.holders).toEqual([]);
    expect(g.unattributedMiB).toBe(4000);
  });

  it("a failed compute-apps query (apps: null) keeps the previous holders and invents no departures", async () => {
    const procs = new FakeProcs();
    procs.set(7, "a.service");
    const a = new GpuAttributor(procs);
    await a.attribute(raw(1000, [gpu(GPU, 4000)], [app(7, 4000)]));
    const g = only(await a.attribute(raw(2000, [gpu(GPU, 4000)], null)));
    expect(g.holders.map((h) => [h.kind, h.pid, h.unit])).toEqual([["unit", 7, "a.service"]]);
    // ... and a death is still noticed through /proc
    procs.kill(7);
    const g2 = only(await a.attribute(raw(3000, [gpu(GPU, 4000)], null)));
    expect(g2.holders.map((h) => [h.kind, h.pid, h.exitedAtMs])).toEqual([["exited", 7, 2000]]);
  });

  it("a reused pid is a new process, and the old one counts as exited", async () => {
    const procs = new FakeProcs();
    procs.set(7, "old.service", "sleeping", 1000);
    const a = new GpuAttributor(procs);
    await a.attribute(raw(1000, [gpu(GPU, 4000)], [app(7, 4000)]));
    // pid 7 now belongs to an unrelated process that holds no GPU memory
    procs.set(7, null, "sleeping", 9000, ["bash"]);
    const g = only(await a.attribute(raw(2000, [gpu(GPU, 4000)], [])));
    expect(g.holders.map((h) => [h.kind, h.pid, h.unit])).toEqual([["exited", 7, "old.service"]]);
    // and if the new pid-7 process is itself listed, it is a live holder
    const b = new GpuAttributor(procs);
    procs.set(7, "old.service", "sleeping", 1000);
    await b.attribute(raw(1000, [gpu(GPU, 4000)], [app(7, 4000)]));
    procs.set(7, "new.service", "running", 9000);
    const g2 = only(await b.attribute(raw(2000, [gpu(GPU, 4000)], [app(7, 4000)])));
    expect(g2.holders.map((h) => [h.kind, h.unit])).toEqual([["unit", "new.service"]]);
  });

  it("GB10: memory.used is [N/A] → holders from the list, nothing unattributed or guessed", async () => {
    const procs = new FakeProcs();
    procs.set(7, "a.service");
    const a = new GpuAttributor(procs);
    await a.attribute(raw(1000, [gpu(GPU, null, null)], [app(7, 4000)]));
    procs.kill(7);
    const g = only(await a.attribute(raw(2000, [gpu(GPU, null, null)], [])));
    expect(g.holders).toEqual([]);
    expect(g.unattributedMiB).toBe(0);
  });

  it("an exited holder is blamed at most maxExitedAgeMs", async () => {
    const procs = new FakeProcs();
    procs.set(7, "a.service");
    const a = new GpuAttributor(procs, { maxExitedAgeMs: 5000 });
    await a.attribute(raw(1000, [gpu(GPU, 4000)], [app(7, 4000)]));
    procs.kill(7);
    expect(only(await a.attribute(raw(2000, [gpu(GPU, 4000)], []))).holders).toHaveLength(1);
    expect(only(await a.attribute(raw(7000, [gpu(GPU, 4000)], []))).holders).toHaveLength(1);
    const late = only(await a.attribute(raw(7001, [gpu(GPU, 4000)], [])));
    expect(late.holders).toEqual([]);
    expect(late.unattributedMiB).toBe(4000);
  });

  it("several departed holders on several GPUs share out what is left, newest first", async () => {
    const procs = new FakeProcs();
    procs.set(1, "tp.service");
    procs.set(2, "tp.service");
    procs.set(3, "other.service");
    const a = new GpuAttributor(procs);
    await a.attribute(raw(1000, [gpu(GPU, 9000), gpu(GPU2, 5000)], [app(1, 4000), app(3, 5000), app(2, 5000, GPU2)]));
    procs.kill(3);
    await a.attribute(raw(2000, [gpu(GPU, 9000), gpu(GPU2, 5000)], [app(1, 4000), app(2, 5000, GPU2)]));
    procs.kill(1);
    procs.kill(2);
    const s = await a.attribute(raw(3000, [gpu(GPU, 6000), gpu(GPU2, 100)], []));
    expect(only(s).holders.map((h) => [h.pid, h.usedMiB, h.exitedAtMs])).toEqual([
      [1, 4000, 2000],
      [3, 2000, 1000],
    ]);
    expect(only(s, GPU2).holders.map((h) => [h.pid, h.usedMiB])).toEqual([[2, 100]]);
    // below the tolerance: drained
    const s2 = await a.attribute(raw(4000, [gpu(GPU, 6000), gpu(GPU2, 10)], []));
    expect(only(s2, GPU2).holders).toEqual([]);
    expect(only(s2, GPU2).unattributedMiB).toBe(10);
  });

  it("inspects each pid once per sample even when it holds several GPUs", async () => {
    const procs = new FakeProcs();
    procs.set(1, "tp.service");
    const a = new GpuAttributor(procs);
    await a.attribute(raw(1000, [gpu(GPU, 10), gpu(GPU2, 10)], [app(1, 10), app(1, 10, GPU2)]));
    expect(procs.calls).toBe(1);
  });
});
