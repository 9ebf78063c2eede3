import { describe, expect, it } from "vitest";
import { fault, operation } from "@/components/live/eventFixtures";
import type { OperationStepRecord } from "@/server/contract/operations";
import { timeScale } from "./layout";
import { faultLabel, faultsInView, layoutOperations, operationLabel } from "./timelineEvents";

const NOW = Date.UTC(2025, 0, 12, 12, 0, 0);
const ago = (s: number) => NOW - s * 1000;
const rec = (step: OperationStepRecord["step"], secAgo: number): OperationStepRecord => ({ step, atMs: ago(secAgo), heldMiB: 0, pids: [], message: "" });

describe("operations on the timeline", () => {
  const scale = timeScale(ago(900), NOW, 800);
  const done = operation("started", {
    createdAtMs: ago(100),
    steps: [rec("stopping", 100), rec("waiting-for-gpus", 97), rec("starting", 70), rec("started", 61)],
  });
  const running = operation("waiting-for-gpus", { id: "b1-o2", createdAtMs: ago(20), steps: [rec("waiting-for-gpus", 20)] });
  const old = operation("started", { id: "b1-o0", createdAtMs: ago(5000), steps: [rec("started", 4990)] });

  it("spans from the request to its end (now while it runs), with a tick per step; those outside the window are left out", () => {
    const spans = layoutOperations([running, done, old], scale, NOW);
    expect(spans.map((s) => s.op.id)).toEqual(["b1-o1", "b1-o2"]);
    expect(spans[0]).toMatchObject({ startMs: ago(100), endMs: ago(61), open: false });
    expect(spans[0]!.stepXs.map((s) => s.step)).toEqual(["stopping", "waiting-for-gpus", "starting", "started"]);
    expect(spans[1]).toMatchObject({ endMs: NOW, open: true });
    expect(spans[1]!.x + spans[1]!.width).toBeCloseTo(scale.x(NOW));
  });

  it("reads as who, when and each step's duration", () => {
    const [span] = layoutOperations([done], scale, NOW);
    expect(operationLabel(span!, NOW, "UTC")).toBe(
      "restart when its GPUs are free by ada from 11:58:20 to 11:58:59 (39 s): stopping 3.0 s, waiting for its GPUs 27 s, starting 9.0 s, started",
    );
    const [live] = layoutOperations([running], scale, NOW);
    expect(operationLabel(live!, NOW, "UTC")).toBe("restart when its GPUs are free by ada from 11:59:40 to now (20 s): waiting for its GPUs 20 s");
  });
});

describe("faults on the timeline", () => {
  it("those in view, oldest first, and what they say", () => {
    const a = fault("x2", { atMs: ago(10) });
    const b = fault("x1", { atMs: ago(20), code: 13, title: "Graphics engine exception", resetRequired: false, pid: null, gpuIndex: null });
    expect(faultsInView([a, b, fault("x0", { atMs: ago(5000) })], ago(900), NOW).map((f) => f.id)).toEqual(["x1", "x2"]);
    expect(faultLabel(a, "UTC")).toBe("Xid 79 at 11:59:50 on GPU 0: GPU has fallen off the bus, reset required, PID 4321 (python3)");
    expect(faultLabel(b, "UTC")).toBe("Xid 13 at 11:59:40 on PCI 0000:3b:00: Graphics engine exception");
  });
});
