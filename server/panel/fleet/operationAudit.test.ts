import { describe, expect, it } from "vitest";
import { AuditStore } from "../../auth/audit";
import type { Operation } from "../../contract/operations";
import type { Dialect } from "../../store/database";
import { fixedStore } from "../../store/lazyStore";
import { testDatabasesForFile, type TestDb } from "../../store/testing/databases";
import { OperationAudit, operationOutcome } from "./operationAudit";

const dbs = testDatabasesForFile("the audit rows of GPU-aware operations");

/** A real audit store on a fresh database, and its rows oldest first. */
async function auditOn(dialect: Dialect, db?: TestDb) {
  const store = await (db ?? (await dbs.fresh(dialect))).open();
  return {
    store: new AuditStore(fixedStore(store)),
    rows: async () => (await new AuditStore(fixedStore(store)).queryAudit({ limit: 1000 })).reverse(),
  };
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

describe.each(dbs.dialects)("OperationAudit on %s", (dialect) => {
  it("one row per step, each once even when events repeat; the request row gets the final outcome", async () => {
    const { rows, store } = await auditOn(dialect);
    const a = new OperationAudit(store);
    const request = await store.recordAudit({
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
    await a.handle("gpu-a", op(["stopping"]));
    await a.track("gpu-a", op(["stopping", "waiting-for-gpus"]), request);
    await a.handle("gpu-a", op(["stopping", "waiting-for-gpus"])); // progress within the step
    await a.handle("gpu-a", op(["stopping", "waiting-for-gpus", "starting", "started"]));
    await a.handle("gpu-a", op(["stopping", "waiting-for-gpus", "starting", "started"])); // replay after a reconnect
    const list = await rows();
    expect(list.slice(1).map((r) => [r.outcome, r.detail, r.user, r.action])).toEqual([
      ["stopping", "operation abc-o1 step stopping: stopping text", "otto", "restart"],
      ["waiting-for-gpus", "operation abc-o1 step waiting-for-gpus: waiting-for-gpus text", "otto", "restart"],
      ["starting", "operation abc-o1 step starting: starting text", "otto", "restart"],
      ["started", "operation abc-o1 step started: started text", "otto", "restart"],
    ]);
    expect(list[0]).toMatchObject({ outcome: "done", detail: "GPU-aware restart: operation abc-o1: m" });
  });

  it("after a panel restart the request row is found by the operation id in its detail", async () => {
    const { rows, store } = await auditOn(dialect);
    await store.recordAudit({
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
    await new OperationAudit(store).handle("gpu-a", op(["waiting-for-gpus", "timed-out"]));
    expect((await rows())[0]!.outcome).toBe("timeout");
  });

  it.runIf(dialect === "postgres")("two replicas seeing the same steps write each step once", async () => {
    const db = await dbs.fresh(dialect);
    const [a, b] = [await auditOn(dialect, db), await auditOn(dialect, db)];
    const steps = op(["stopping", "waiting-for-gpus", "starting"]);
    await Promise.all([new OperationAudit(a.store).handle("gpu-a", steps), new OperationAudit(b.store).handle("gpu-a", steps)]);
    expect((await a.rows()).map((r) => r.outcome)).toEqual(["stopping", "waiting-for-gpus", "starting"]);
  });

  it("outcomes: a refusal before any stop is 'refused'; a failure later is 'failed'", async () => {
    const foreign = [{ pid: 1, cmdline: [], processName: "x", unit: null, gpuUuid: "GPU-1", gpuIndex: 0, usedMiB: 1, startedAtMs: 1 }];
    expect(operationOutcome(op(["failed"], { foreign }))).toBe("refused");
    expect(operationOutcome(op(["stopping", "waiting-for-gpus", "failed"], { foreign }))).toBe("failed");
    expect(operationOutcome(op(["waiting-for-gpus", "canceled"]))).toBe("canceled");
    expect(operationOutcome(op(["waiting-for-gpus"]))).toBe("pending");
  });
});
