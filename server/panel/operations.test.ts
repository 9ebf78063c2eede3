/**
 * GPU-aware restarts, killing a GPU holder and stopping a crash loop through the panel's real
 * endpoint, in front of a real agent on the simulated host: permissions, forwarding, and the
 * audit log (a row for the request and one per step).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditRow } from "../auth/audit";
import type { RunningAgent } from "../agent/main";
import { HOST, addUser, call, hostConnected, login, startTestAgent, startTestPanel, type TestPanel } from "./panelTestHarness";

const KIMI = "vllm-kimi-k25.service";
const QWEN = "vllm-qwen-draft.service";

let agent: RunningAgent;
let tp: TestPanel;
let admin = "";
let operator = "";
let viewer = "";

beforeAll(async () => {
  agent = await startTestAgent();
  tp = await startTestPanel(agent);
  await addUser(tp.panel, "ada", "admin");
  await addUser(tp.panel, "otto", "operator", ["vllm-kimi-*"]);
  await addUser(tp.panel, "vera", "viewer");
  [admin, operator, viewer] = await Promise.all([login(tp.panel, "ada"), login(tp.panel, "otto"), login(tp.panel, "vera")]);
  await hostConnected(tp.panel);
}, 60_000);

afterAll(async () => {
  await tp?.close();
  await agent?.close();
});

const data = <T>(r: { json: { result?: { data?: unknown } } | null }) => r.json?.result?.data as T;
const rows = async (filter: (r: AuditRow) => boolean) => (await tp.panel.auth.audit.queryAudit({ limit: 500 })).filter(filter).reverse();

async function until<T>(what: string, probe: () => T | null | undefined | false | Promise<T | null | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== null && v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("GPU-aware restart through the panel", () => {
  it("an operator restarts Kimi when its GPUs are free: the request row settles 'done', every step has a row", async () => {
    const r = await call(tp.panel, "units.restart", {
      cookie: operator,
      input: { host: HOST, name: KIMI, waitForGpus: true, reason: "cure", timeoutMs: 60_000 },
    });
    expect(r.status).toBe(200);
    const res = data<{ operationId: string; jobId: null; auditId: number; operation: { host: string; step: string } }>(r);
    expect(res).toMatchObject({ jobId: null, operationId: expect.any(String), auditId: expect.any(Number) });
    const id = res.operationId;
    // readable on the panel, with the panel's host name
    const got = await call(tp.panel, `operations.get?input=${encodeURIComponent(JSON.stringify({ host: HOST, id }))}`, { method: "GET", cookie: viewer });
    expect(data<{ host: string; unit: string }>(got)).toMatchObject({ host: HOST, unit: KIMI });
    const request = await until("the request row settled", async () => {
      const row = (await rows((x) => x.id === res.auditId))[0];
      return row && row.outcome !== "pending" ? row : null;
    });
    expect(request).toMatchObject({ user: "otto", action: "restart", outcome: "done", reason: "cure", host: HOST, unit: KIMI });
    expect(request.detail).toMatch(new RegExp(`^GPU-aware restart: operation ${id}: Started `));
    const steps = await rows((x) => x.detail?.startsWith(`operation ${id} step`) ?? false);
    expect(steps.map((x) => x.outcome)).toEqual(["stopping", "waiting-for-gpus", "starting", "started"]);
    expect(steps.every((x) => x.user === "otto" && x.action === "restart" && x.unit === KIMI)).toBe(true);
    expect(steps[1]!.detail).toMatch(new RegExp(`^operation ${id} step waiting-for-gpus: `));
    const list = await call(tp.panel, `operations.list?input=${encodeURIComponent(JSON.stringify({ host: HOST, unit: KIMI }))}`, {
      method: "GET",
      cookie: viewer,
    });
    expect(data<{ id: string }[]>(list)[0]!.id).toBe(id);
  }, 40_000);

  it("cancel needs the action's permission on the unit; a viewer is refused and audited", async () => {
    await until("Kimi running", () => tp.panel.fleet.get(HOST)?.units.get(KIMI)?.activeState === "active");
    const r = await call(tp.panel, "units.restart", { cookie: admin, input: { host: HOST, name: KIMI, waitForGpus: true, confirmed: true } });
    const id = data<{ operationId: string }>(r).operationId;
    const refused = await call(tp.panel, "operations.cancel", { cookie: viewer, input: { host: HOST, id } });
    expect(refused.status).toBe(403);
    expect((await rows((x) => x.action === "operation.cancel" && x.user === "vera")).at(-1)).toMatchObject({ outcome: "refused", unit: KIMI });
    const ok = await call(tp.panel, "operations.cancel", { cookie: admin, input: { host: HOST, id } });
    // canceled while stopping/waiting, or already too late (the start queued): never silently ignored
    if (ok.status === 200) {
      await until("canceled", async () => (await rows((x) => x.detail?.startsWith(`operation ${id} step canceled`) ?? false)).length === 1);
    } else {
      expect(ok.json?.error?.message).toMatch(/Too late to cancel/);
    }
  }, 40_000);

  it("killHolder is for admins only; an operator's attempt is refused and audited", async () => {
    const r = await call(tp.panel, "gpus.killHolder", { cookie: operator, input: { host: HOST, unit: KIMI, pid: 4242, startedAtMs: 1 } });
    expect(r.status).toBe(403);
    expect((await rows((x) => x.action === "gpu.kill-holder")).at(-1)).toMatchObject({ user: "otto", outcome: "refused", unit: KIMI });
    // an admin asking for a PID that holds nothing on Kimi's GPUs: refused by the agent, nothing killed
    const a = await call(tp.panel, "gpus.killHolder", { cookie: admin, input: { host: HOST, unit: KIMI, pid: 4242, startedAtMs: 1 } });
    expect(a.status).toBe(412);
    expect(a.json?.error?.message).toMatch(/holds no GPU memory on vllm-kimi-k25\.service's GPUs/);
  });

  it("stop the loop: the operator may not (not their unit); the admin stops it with the evidence", async () => {
    const denied = await call(tp.panel, "units.stopLoop", { cookie: operator, input: { host: HOST, name: QWEN } });
    expect(denied.status).toBe(403);
    const evidence = await call(tp.panel, `units.crashLoop?input=${encodeURIComponent(JSON.stringify({ host: HOST, name: QWEN }))}`, {
      method: "GET",
      cookie: viewer,
    });
    expect(data<{ unit: string; restart: string }>(evidence)).toMatchObject({ unit: QWEN, restart: "on-failure" });
    const r = await call(tp.panel, "units.stopLoop", { cookie: admin, input: { host: HOST, name: QWEN, reason: "OOM loop" } });
    expect(r.status).toBe(200);
    const auditId = data<{ auditId: number }>(r).auditId;
    const row = await until("the stop-loop row settled", async () => {
      const x = (await rows((y) => y.id === auditId))[0];
      return x && x.outcome !== "pending" ? x : null;
    });
    expect(row).toMatchObject({ action: "stop-loop", user: "ada", reason: "OOM loop", outcome: "done" });
  }, 30_000);

  it("faults of a host are readable by anyone signed in", async () => {
    const r = await call(tp.panel, `gpus.faults?input=${encodeURIComponent(JSON.stringify({ host: HOST }))}`, { method: "GET", cookie: viewer });
    expect(r.status).toBe(200);
    expect(data<unknown[]>(r)).toEqual([]);
  });
});
