import { describe, expect, it } from "vitest";
import type { AuditEntry, AuditQuery, AuditRow, AuditStore } from "../../auth/audit";
import type { Operation } from "../../contract/operations";
import { OperationAudit, operationOutcome } from "./operationAudit";

/** The three calls OperationAudit makes, over an array. */
function memoryAudit() {
  const list: AuditRow[] = [];
  const store = {
    recordAudit(e: AuditEntry): number {
      const row: AuditRow = {
        id: list.length + 1,
        at: e.at ?? 0,
        user: e.user,
        role: e.role,
        sourceAddr: e.sourceAddr,
        host: e.host,
        unit: e.unit,
        action: e.action,
        reason: e.reason,
        outcome: e.outcome,
        jobId: e.jobId ?? null,
        detail: e.detail ?? null,
      };
      list.push(row);
      return row.id;
    },
    updateAuditOutcome(id: number, outcome: string, extra: { detail?: string | null } = {}): boolean {
      const row = list.find((r) => r.id === id)!;
      row.outcome = outcome;
      if (extra.detail !== undefined) row.detail = extra.detail;
      return true;
    },
    queryAudit(q: AuditQuery = {}): AuditRow[] {
      return list
        .filter(
          (r) =>
            (!q.host || r.host === q.host) && (!q.unit || r.unit === q.unit) && (!q.action || r.action === q.action) && (!q.outcome || r.outcome === q.outcome),
        )
        .reverse();
    },
  };
  return { list, store: store as unknown as AuditStore };
}

function op(steps: Operation["step"][], over: Partial<Operation> = {}): Operation {
  return {
    id: "abc-o1",
    host: "gpu-a",
    unit: "vllm-a.service",
    kind: "restart",
    step: steps.at(-1)!,
    heldMiB: 0,
    pids: [],
    message: "m",
    atMs: 0,
    createdAtMs: 0,
    deadlineMs: 0,
    timeoutMs: 0,
    timeoutSource: "unit",
    user: "otto",
    role: "operator",
    reason: "why",
    gpus: [],
    foreign: [],
    pool: null,
    jobId: null,
    steps: steps.map((step, i) => ({ step, atMs: i, heldMiB: 0, pids: [], message: `${step} text` })),
    ...over,
  };
}

describe("OperationAudit", () => {
  it("one row per step, each once even when events repeat; the request row gets the final outcome", () => {
    const { list, store } = memoryAudit();
    const a = new OperationAudit(store);
    const request = store.recordAudit({
      user: "otto",
      role: "operator",
      sourceAddr: "10.0.0.1",
      host: "gpu-a",
      unit: "vllm-a.service",
      action: "restart",
      reason: "why",
      outcome: "pending",
    });
    // events can come before the router gets its answer back
    a.handle("gpu-a", op(["stopping"]));
    a.track("gpu-a", op(["stopping", "waiting-for-gpus"]), request);
    a.handle("gpu-a", op(["stopping", "waiting-for-gpus"])); // progress within the step
    a.handle("gpu-a", op(["stopping", "waiting-for-gpus", "starting", "started"]));
    a.handle("gpu-a", op(["stopping", "waiting-for-gpus", "starting", "started"])); // replay after a reconnect
    expect(list.slice(1).map((r) => [r.outcome, r.detail, r.user, r.action])).toEqual([
      ["stopping", "operation abc-o1 step stopping: stopping text", "otto", "restart"],
      ["waiting-for-gpus", "operation abc-o1 step waiting-for-gpus: waiting-for-gpus text", "otto", "restart"],
      ["starting", "operation abc-o1 step starting: starting text", "otto", "restart"],
      ["started", "operation abc-o1 step started: started text", "otto", "restart"],
    ]);
    expect(list[0]).toMatchObject({ outcome: "done", detail: "GPU-aware restart: operation abc-o1: m" });
  });

  it("after a panel restart the request row is found by the operation id in its detail", () => {
    const { list, store } = memoryAudit();
    store.recordAudit({
      user: "otto",
      role: "operator",
      sourceAddr: null,
      host: "gpu-a",
      unit: "vllm-a.service",
      action: "restart",
      reason: null,
      outcome: "pending",
      detail: "GPU-aware restart: operation abc-o1",
    });
    new OperationAudit(store).handle("gpu-a", op(["waiting-for-gpus", "timed-out"]));
    expect(list[0]!.outcome).toBe("timeout");
  });

  it("outcomes: a refusal before any stop is 'refused'; a failure later is 'failed'", () => {
    const foreign = [{ pid: 1, cmdline: [], processName: "x", unit: null, gpuUuid: "GPU-1", gpuIndex: 0, usedMiB: 1, startedAtMs: 1 }];
    expect(operationOutcome(op(["failed"], { foreign }))).toBe("refused");
    expect(operationOutcome(op(["stopping", "waiting-for-gpus", "failed"], { foreign }))).toBe("failed");
    expect(operationOutcome(op(["waiting-for-gpus", "canceled"]))).toBe("canceled");
    expect(operationOutcome(op(["waiting-for-gpus"]))).toBe("pending");
  });
});
