/**
 * The on-call loop through the panel's real endpoint, over a real agent on a simulated host and
 * real local receivers ("main" gets every alert, "pager" is the rule's escalateTo: it hears only
 * escalations and what follows them): a failed unit is acknowledged in time (main hears who and
 * why, the pager nothing, the status page says "Investigating", nothing escalates); the next
 * failure is not, and escalates once: the pager hears that, then who took it and its end; a maintenance window keeps the
 * one after that recorded but unsent, and the status page says "Planned maintenance until …".
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../agent/main";
import type { AlertView, AlertWebhookPayload } from "../contract/alerts";
import type { MaintenanceWindowView } from "../contract/maintenance";
import type { Panel } from "../panel/instance";
import { addUser, call, HOST, login, startTestAgent, startTestPanel, type RpcResult, type TestPanel } from "../panel/panelTestHarness";
import { TestReceiver } from "./testing/receiver";

const FAILED = "vllm-llama-70b.service"; // the simulator's unit whose ExecStartPre fails on every start
const ESCALATE_S = 4;

let agent: RunningAgent;
let tp: TestPanel;
let panel: Panel;
const receiver = new TestReceiver();
const cookie: Record<string, string> = {};

beforeAll(async () => {
  await receiver.start();
  agent = await startTestAgent();
  tp = await startTestPanel(agent, {
    env: {
      GPUDECK_ALERT_CHANNELS: JSON.stringify([
        { type: "webhook", name: "main", url: receiver.url("/main") },
        { type: "webhook", name: "pager", url: receiver.url("/pager") },
      ]),
      GPUDECK_ALERT_RULES: JSON.stringify({ "unit-failed": [{ match: [`${HOST}:${FAILED}`], escalateAfter: `${ESCALATE_S}s`, escalateTo: ["pager"] }] }),
    },
    panel: {
      alerts: { tickMs: 200, groupWindowMs: 300, delivery: { pollMs: 50, backoffBaseMs: 100, backoffMaxMs: 500 } },
      statusPage: { documentTtlMs: 0, uptimeTtlMs: 60_000, settingsTtlMs: 0 },
    },
  });
  panel = tp.panel;
  await addUser(panel, "ada", "admin");
  await addUser(panel, "otto", "operator", ["vllm-embed-*"]);
  await addUser(panel, "olga", "operator", ["vllm-llama-*"]);
  await addUser(panel, "vera", "viewer");
  for (const u of ["ada", "otto", "olga", "vera"]) cookie[u] = await login(panel, u);
}, 30_000);

afterAll(async () => {
  await tp?.close();
  await agent?.close();
  await receiver.stop();
});

const mutate = (path: string, input: unknown, user = "ada") => call(panel, path, { input, cookie: cookie[user] });
const query = (path: string, input?: unknown, user = "ada") => call(panel, path, { method: "GET", input, cookie: cookie[user] });
const data = <T>(r: RpcResult) => {
  if (r.status !== 200) throw new Error(`${r.status}: ${r.text}`);
  return r.json!.result!.data as T;
};
const at = (path: string) =>
  receiver.received
    .filter((r) => r.path === path)
    .map((r) => r.json as AlertWebhookPayload)
    .filter((p) => p.unit === FAILED);
/** (main gets every alert; pager, named in escalateTo, only what was escalated to it and what followed) */
const escalations = () => at("/pager").filter((p) => p.kind === "escalation");
const openAlert = async () =>
  data<{ alerts: AlertView[] }>(await query("alerts.list", { state: "open", unit: FAILED })).alerts.find((a) => a.rule === "unit-failed") ?? null;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const lastAuditId = async () => (await panel.auth.audit.queryAudit({ limit: 1 }))[0]?.id ?? 0;
const auditSince = async (mark: number) => (await panel.auth.audit.queryAudit({ limit: 1000 })).filter((r) => r.id > mark).reverse();

/** reset-failed (its alert resolves), then start it again (it fails again: a new alert) */
async function failAgain(): Promise<void> {
  data(await mutate("units.resetFailed", { host: HOST, name: FAILED }));
  await expect.poll(openAlert, { timeout: 10_000 }).toBeNull();
  await mutate("units.start", { host: HOST, name: FAILED });
  await expect.poll(openAlert, { timeout: 15_000 }).not.toBeNull();
}

describe("acknowledged in time", () => {
  it("viewers and operators of other units are refused; an operator of the unit acknowledges it; each is audited", async () => {
    await expect.poll(() => at("/main").length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
    const alert = (await openAlert())!;
    const mark = await lastAuditId();
    expect((await mutate("alerts.ack", { id: alert.id }, "vera")).status).toBe(403);
    expect((await mutate("alerts.ack", { id: alert.id }, "otto")).status).toBe(403);
    expect((await mutate("alerts.ack", { id: alert.id, note: "x", extra: 1 }, "olga")).status).toBe(400);
    const acked = data<AlertView>(await mutate("alerts.ack", { id: alert.id, note: "looking at the weights path" }, "olga"));
    expect(acked).toMatchObject({ acknowledgedBy: "olga", ackNote: "looking at the weights path" });
    expect(acked.acknowledgedAt).toEqual(expect.any(Number));
    expect((await mutate("alerts.ack", { id: alert.id }, "ada")).status).toBe(409);
    const rows = await auditSince(mark);
    expect(rows.map((r) => [r.user, r.action, r.outcome])).toEqual([
      ["vera", "alert.ack", "refused"],
      ["otto", "alert.ack", "refused"],
      ["olga", "alert.ack", "refused"],
      ["olga", "alert.ack", "ok"],
      ["ada", "alert.ack", "refused"],
    ]);
    expect(rows[3]).toMatchObject({ host: HOST, unit: FAILED, reason: "looking at the weights path" });
  });

  it("the channel hears who and why; the Alerts page and the status page show it; it never escalates", async () => {
    await expect.poll(() => at("/main").filter((p) => p.kind === "acknowledged").length, { timeout: 5000 }).toBe(1);
    const ack = at("/main").find((p) => p.kind === "acknowledged")!;
    expect(ack.summary).toBe("olga acknowledged it: looking at the weights path");
    expect(ack.title).toBe(`Acknowledged: ${HOST}: ${FAILED} failed`);
    expect(receiver.received.find((r) => (r.json as AlertWebhookPayload).kind === "acknowledged")!.headers["x-gpudeck-event"]).toBe("acknowledged");
    expect(await openAlert()).toMatchObject({ acknowledgedBy: "olga" });
    const svc = (await panel.statusHttp.service.document()).services.find((s) => s.investigating);
    expect(svc?.words).toMatch(/ — Investigating$/);
    await sleep((ESCALATE_S + 1.5) * 1000);
    expect(escalations()).toEqual([]);
    // the escalation channel heard nothing of an alert that never escalated, and the Alerts page says why
    expect(at("/pager")).toEqual([]);
    const channels = data<{ name: string; escalationOnly?: boolean }[]>(await query("alerts.channels.list"));
    expect(channels.filter((c) => c.name !== "push").map((c) => [c.name, c.escalationOnly])).toEqual([
      ["main", false],
      ["pager", true],
    ]);
  }, 20_000);
});

describe("not acknowledged", () => {
  it("escalates once to escalateTo, saying it was not acknowledged; the resolution clears Investigating", async () => {
    await failAgain();
    expect((await panel.statusHttp.service.document()).services.some((s) => s.investigating)).toBe(false);
    await expect.poll(() => escalations().length, { timeout: (ESCALATE_S + 6) * 1000 }).toBe(1);
    const esc = escalations()[0]!;
    expect(esc).toMatchObject({ kind: "escalation", state: "firing", title: `Not acknowledged: ${HOST}: ${FAILED} failed` });
    expect(esc.summary).toMatch(new RegExp(`^Not acknowledged after ${ESCALATE_S} s: `));
    // to the pager only; main had its start
    expect(at("/main").filter((p) => p.kind === "escalation")).toEqual([]);
    await sleep(2000);
    expect(escalations()).toHaveLength(1);
    const escalated = (await openAlert())!;
    expect(escalated.escalatedAt).toEqual(expect.any(Number));
    // its start went to main only; once escalated, the pager hears who took it and that it ended
    expect(at("/pager").map((p) => p.kind)).toEqual(["escalation"]);
    data(await mutate("alerts.ack", { id: escalated.id, note: "on it now" }, "olga"));
    await expect.poll(() => at("/pager").map((p) => p.kind), { timeout: 5000 }).toEqual(["escalation", "acknowledged"]);
    data(await mutate("units.resetFailed", { host: HOST, name: FAILED }));
    await expect.poll(() => at("/pager").map((p) => `${p.kind}:${p.state}`), { timeout: 10_000 }).toContain("alert:resolved");
  }, 40_000);
});

describe("a maintenance window", () => {
  let id = 0;

  it("admins create one (audited); operators may not; bad input says why", async () => {
    const mark = await lastAuditId();
    const input = {
      name: "weights migration",
      units: [`${HOST}:vllm-llama-*`],
      startsAt: new Date(Date.now() - 1000).toISOString(),
      endsAt: Date.now() + 3_600_000,
    };
    expect((await mutate("maintenance.create", input, "olga")).status).toBe(403);
    const bad = await mutate("maintenance.create", { ...input, endsAt: 1 });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/endsAt must be after startsAt/);
    const w = data<MaintenanceWindowView>(await mutate("maintenance.create", input));
    id = w.id as number;
    expect(w).toMatchObject({ name: "weights migration", phase: "now", source: "panel", createdBy: "ada" });
    expect((await auditSince(mark)).map((r) => [r.user, r.action, r.outcome])).toEqual([
      ["olga", "maintenance.create", "refused"],
      ["ada", "maintenance.create", "refused"],
      ["ada", "maintenance.create", "ok"],
    ]);
    const listed = data<MaintenanceWindowView[]>(await query("maintenance.list", undefined, "vera"));
    expect(listed[0]).toMatchObject({ id, phase: "now" });
  });

  it("during it, the unit's failure is recorded but not sent, and the status page says so", async () => {
    const before = receiver.received.length;
    await failAgain();
    const alert = (await openAlert())!;
    expect(alert.inMaintenance).toBe(true);
    await sleep((ESCALATE_S + 1.5) * 1000);
    // neither its start nor an escalation went anywhere (the previous alert's resolution may have)
    expect(receiver.received.slice(before).map((r) => (r.json as AlertWebhookPayload).alertId)).not.toContain(alert.id);
    const svc = (await panel.statusHttp.service.document()).services.find((s) => s.maintenanceUntilMs !== undefined);
    expect(svc?.words).toMatch(/^Planned maintenance until \d\d:\d\d UTC$/);
  }, 40_000);

  it("ended early: the alert still open is told then (audited)", async () => {
    const alert = (await openAlert())!;
    const mark = await lastAuditId();
    expect(data<MaintenanceWindowView>(await mutate("maintenance.end", { id })).phase).toBe("past");
    expect((await mutate("maintenance.end", { id })).status).toBe(404);
    await expect.poll(() => at("/main").filter((p) => p.alertId === alert.id && p.kind === "alert").length, { timeout: 10_000 }).toBe(1);
    expect((await auditSince(mark)).map((r) => [r.action, r.outcome])).toEqual([
      ["maintenance.end", "ok"],
      ["maintenance.end", "refused"],
    ]);
  }, 20_000);
});
