import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../contract/events";
import type { GpuSample, ProcessInfo } from "../../contract/types";
import type { ProcAdapter } from "../adapter";
import { FaultLog, type FaultHub } from "./faultLog";

const GPU_UUID = "GPU-5e1f0c2a-7b3d-4e8f-9a01-000000000001";

function sample(holderPid: number): GpuSample {
  return {
    atMs: 1,
    gpus: [
      {
        uuid: GPU_UUID,
        index: 0,
        name: "H200",
        pciBusId: "00000000:3B:00.0",
        memoryTotalMiB: 1,
        memoryUsedMiB: 1,
        utilizationPct: 0,
        temperatureC: 0,
        powerW: 0,
        unattributedMiB: 0,
        holders: [{ kind: "exited", pid: holderPid, unit: "vllm-b.service", processName: "python3", cmdline: [], state: "gone", usedMiB: 1 }],
      },
    ],
  };
}

function hub(procs: Record<number, { info: ProcessInfo; unit: string | null }>, gpu: GpuSample | null) {
  const events: AgentEvent[] = [];
  const h: FaultHub = {
    bootId: "b00",
    host: { procs: { inspect: async (pid) => procs[pid] ?? { info: { pid, state: "gone", cmdline: [] }, unit: null } } satisfies ProcAdapter },
    gpuNow: () => gpu,
    gpuRecent: () => [],
    publish: (e) => events.push(e),
  };
  return { h, events };
}

describe("FaultLog", () => {
  it("attributes an Xid to the GPU by PCI address and to the unit of its live PID; publishes it", async () => {
    const { h, events } = hub(
      { 1234: { info: { pid: 1234, state: "sleeping", cmdline: ["python3"], startedAtMs: 500 }, unit: "vllm-a.service" } },
      sample(999),
    );
    const log = new FaultLog(h);
    await log.message({ atMs: 1000, message: "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus." });
    await log.message({ atMs: 1001, message: "NVRM: loading NVIDIA UNIX x86_64 Kernel Module" });
    expect(log.all()).toHaveLength(1);
    expect(log.all()[0]).toMatchObject({
      id: "b00-x1",
      kind: "xid",
      code: 79,
      atMs: 1000,
      gpuUuid: GPU_UUID,
      gpuIndex: 0,
      pid: 1234,
      unit: "vllm-a.service",
      resetRequired: true,
      title: "GPU has fallen off the bus",
    });
    expect(events).toEqual([{ kind: "fault", fault: log.all()[0] }]);
    expect(log.list({ unit: "vllm-a.service" })).toHaveLength(1);
    expect(log.list({ unit: "other.service" })).toHaveLength(0);
    expect(log.list({ unit: "other.service", gpuUuids: [GPU_UUID] })).toHaveLength(1);
    expect(log.list({ sinceMs: 1001 })).toHaveLength(0);
  });

  it("a PID gone already is attributed from the GPU samples' holders; a PID reused by a later process is not trusted", async () => {
    const { h } = hub({ 999: { info: { pid: 999, state: "sleeping", cmdline: ["bash"], startedAtMs: 5000 }, unit: "other.service" } }, sample(999));
    const log = new FaultLog(h);
    // the process now at 999 started after the fault: the samples say whose it was
    await log.message({ atMs: 1000, message: "NVRM: Xid (PCI:0000:3b:00): 13, pid=999, name=python3, Graphics Exception" });
    expect(log.all()[0]).toMatchObject({ pid: 999, unit: "vllm-b.service", resetRequired: false });
    await log.message({ atMs: 1000, message: "NVRM: Xid (PCI:0000:99:00): 31, pid=4, name=x, fault" });
    expect(log.all()[1]).toMatchObject({ gpuUuid: null, gpuIndex: null, unit: null });
  });

  it("is bounded", async () => {
    const { h } = hub({}, null);
    const log = new FaultLog(h, 3);
    for (let i = 0; i < 5; i++) await log.message({ atMs: i, message: `NVRM: Xid (PCI:0000:3b:00): 45, pid=${i + 10}, name=a, Preemptive Cleanup` });
    expect(log.all().map((f) => f.atMs)).toEqual([2, 3, 4]);
  });
});
