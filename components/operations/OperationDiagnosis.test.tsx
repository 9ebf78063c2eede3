import { renderToString } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { operation } from "@/components/live/eventFixtures";
import type { OperationStepRecord } from "@/server/contract/operations";
import type { Readiness } from "@/server/contract/readiness";
import { OperationDiagnosis } from "./OperationDiagnosis";
import { operationDiagnosis } from "./operationDiagnosis";

const rec = (step: OperationStepRecord["step"], atMs: number): OperationStepRecord => ({ step, atMs, heldMiB: 0, pids: [], message: "" });
const T = /\d\d:\d\d:\d\d/.source;
const waiting = operation("waiting-for-gpus", {
  user: "alice",
  steps: [rec("stopping", 10_000), rec("waiting-for-gpus", 13_000)],
  atMs: 48_000, // progress within the step: the step began at 13 s
  heldMiB: 76_800,
  gpus: [{ uuid: "GPU-3", index: 3, heldMiB: 76_800, pids: [], exitedPids: [4820], unexplainedMiB: 0 }],
  message: "GPU 3: 75.0 GiB still held by exited 4820 (draining).",
  reason: "INC-2231",
});
const loading: Readiness = {
  state: "loading",
  engine: "vllm",
  stage: "loading weights",
  progress: { done: 37, total: 119 },
  reason: null,
  sinceMs: 60_000,
  probe: null,
  models: [],
  estimatedReadyAtMs: 80_000 + 3 * 60_000,
};

describe("the diagnosis card while an operation runs", () => {
  it("waiting for the GPUs: what it waits for, since when, asked by whom; Cancel is the operation box's, not a second restart", () => {
    const t = operationDiagnosis(waiting, undefined, 53_000)!;
    expect(t.headline).toMatch(
      new RegExp(
        `^Restart when its GPUs are free, asked by alice 43 s ago: waiting for its GPUs since ${T} \\(40 s\\): 75\\.0 GiB of its last run still held on GPU 3; it gives up at ${T}\\.$`,
      ),
    );
    expect(t.details).toEqual(["GPU 3: 75.0 GiB still held by exited 4820 (draining).", "Reason: INC-2231"]);
    expect(t.nextStep).toMatch(/^Nothing to do while it waits: it starts the unit by itself/);
    const html = renderToString(<OperationDiagnosis operation={waiting} readiness={undefined} nowMs={53_000} />);
    expect(html).toContain('data-code="operation-running"');
    expect(html).not.toContain("<button");
    expect(html).not.toMatch(/fix the cause|then restart it/);
  });

  it("starting: the engine's progress in the header's words (the live readiness), with the estimate", () => {
    const starting = operation("starting", {
      user: "gpudeck (self-heal)",
      steps: [rec("stopping", 10_000), rec("waiting-for-gpus", 13_000), rec("starting", 50_000)],
    });
    const t = operationDiagnosis(starting, loading, 80_000)!;
    expect(t.headline).toMatch(
      new RegExp(
        `^Restart when its GPUs are free, asked by gpudeck \\(self-heal\\) 1 min 10 s ago: starting a.service since ${T} \\(30 s\\): loading weights 37/119 · 20 s · ready in about 3 min\\.$`,
      ),
    );
  });

  it("nothing once it has ended: the card is the diagnosis again", () => {
    expect(operationDiagnosis(operation("started"), undefined, 20_000)).toBeNull();
    expect(renderToString(<OperationDiagnosis operation={operation("failed")} readiness={undefined} nowMs={20_000} />)).toBe("");
  });
});
