import { describe, expect, it } from "vitest";
import { operation } from "@/components/live/eventFixtures";
import type { OperationStepRecord } from "@/server/contract/operations";
import { gpuLine, operationView } from "./operationView";

const rec = (step: OperationStepRecord["step"], atMs: number, heldMiB = 0): OperationStepRecord => ({ step, atMs, heldMiB, pids: [], message: "" });
const statuses = (v: ReturnType<typeof operationView>) => v.steps.map((s) => `${s.step}:${s.status}`);

describe("operationView", () => {
  it("while waiting: stopping done, waiting now with the time left, start to come, Cancel offered", () => {
    const op = operation("waiting-for-gpus", {
      steps: [rec("stopping", 10_000), rec("waiting-for-gpus", 13_000, 614_400)],
      deadlineMs: 70_000,
      heldMiB: 300_000,
    });
    const v = operationView(op, 20_000);
    expect(statuses(v)).toEqual(["stopping:done", "waiting-for-gpus:current", "starting:pending", "started:pending"]);
    expect(v.steps[0]!.durationMs).toBe(3_000);
    expect(v.steps[1]!.durationMs).toBe(7_000);
    expect(v.timeLeftMs).toBe(50_000);
    expect(v.cancellable).toBe(true);
    expect(v.tone).toBe("busy");
    expect(v.heldAtWaitStartMiB).toBe(614_400);
  });

  it("a unit already stopped skips the stop; started ends it, with no Cancel and no deadline", () => {
    const op = operation("started", { steps: [rec("waiting-for-gpus", 10_000), rec("starting", 25_000), rec("started", 34_000)] });
    const v = operationView(op, 40_000);
    expect(statuses(v)).toEqual(["stopping:skipped", "waiting-for-gpus:done", "starting:done", "started:done"]);
    expect(v.steps[2]!.durationMs).toBe(9_000);
    expect(v.timeLeftMs).toBeNull();
    expect(v.cancellable).toBe(false);
    expect(v.tone).toBe("ok");
  });

  it("refused before anything was stopped: failed, the rest not reached", () => {
    const v = operationView(operation("failed", { steps: [rec("failed", 10_000)] }), 11_000);
    expect(statuses(v)).toEqual(["stopping:not-reached", "waiting-for-gpus:not-reached", "starting:not-reached", "failed:failed"]);
    expect(v.tone).toBe("bad");
  });

  it("canceled and timed out keep where they ended", () => {
    expect(statuses(operationView(operation("canceled", { steps: [rec("stopping", 1), rec("waiting-for-gpus", 2), rec("canceled", 3)] }), 4))).toEqual([
      "stopping:done",
      "waiting-for-gpus:done",
      "starting:not-reached",
      "canceled:failed",
    ]);
    expect(operationView(operation("timed-out"), 1).tone).toBe("bad");
    expect(operationView(operation("canceled"), 1).tone).toBe("idle");
  });
});

describe("gpuLine", () => {
  it("says what still holds memory on a GPU, and nothing for a free one", () => {
    expect(gpuLine({ uuid: "GPU-3", index: 3, heldMiB: 12_288, pids: [4821, 4822], exitedPids: [4820], unexplainedMiB: 0 })).toBe(
      "GPU 3: 12.0 GiB · PIDs 4821, 4822 · exited 4820 (memory draining)",
    );
    expect(gpuLine({ uuid: "GPU-3", index: null, heldMiB: 512, pids: [], exitedPids: [], unexplainedMiB: 512 })).toBe(
      "GPU GPU-3: 512 MiB · 512 MiB held by no listed process",
    );
    expect(gpuLine({ uuid: "GPU-3", index: 3, heldMiB: 0, pids: [], exitedPids: [], unexplainedMiB: 0 })).toBeNull();
  });
});
