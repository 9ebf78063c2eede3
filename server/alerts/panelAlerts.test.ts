/**
 * Alerts through the panel's real endpoint over a real agent on a simulated host, with a real
 * local HTTP receiver: the host's failed unit opens an alert whose message carries the agent's
 * diagnosis; it recovers and one resolution follows; channels are admins' (secrets never come
 * back, every change and refusal audited once); "send test" queues and the delivery log shows it;
 * silences are audited with who and why.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../agent/main";
import type { AlertView, AlertWebhookPayload, ChannelView, DeliveryView } from "../contract/alerts";
import type { Panel } from "../panel/instance";
import { addUser, call, HOST, login, startTestAgent, startTestPanel, type RpcResult, type TestPanel } from "../panel/panelTestHarness";
import { TestReceiver } from "./testing/receiver";

const FAILED = "vllm-llama-70b.service"; // the simulator's unit whose ExecStartPre fails
const SECRET_PATH = "/hooks/T000/B000/s3cr3t-webhook-token";

let agent: RunningAgent;
let tp: TestPanel;
let panel: Panel;
const receiver = new TestReceiver();
const hook = new TestReceiver();
const cookie: Record<string, string> = {};

beforeAll(async () => {
  await receiver.start();
  await hook.start();
  agent = await startTestAgent();
  tp = await startTestPanel(agent, {
    env: { GPUDECK_ALERT_WEBHOOK_URL: receiver.url("/env-hook"), GPUDECK_PUBLIC_URL: "https://gpudeck.example" },
    panel: { alerts: { tickMs: 200, groupWindowMs: 300, delivery: { pollMs: 50, backoffBaseMs: 100, backoffMaxMs: 500 } } },
  });
  panel = tp.panel;
  await addUser(panel, "ada", "admin");
  await addUser(panel, "otto", "operator", ["vllm-embed-*"]);
  await addUser(panel, "vera", "viewer");
  for (const u of ["ada", "otto", "vera"]) cookie[u] = await login(panel, u, undefined, { host: "gpudeck.example", origin: "https://gpudeck.example" });
}, 30_000);

afterAll(async () => {
  await tp?.close();
  await agent?.close();
  await receiver.stop();
  await hook.stop();
});

const headers = { host: "gpudeck.example", origin: "https://gpudeck.example" };
const mutate = (path: string, input: unknown, user = "ada") => call(panel, path, { input, cookie: cookie[user], headers });
const query = (path: string, input?: unknown, user = "ada") =>
  call(panel, path, { method: "GET", input, cookie: cookie[user], headers: { host: "gpudeck.example" } });
const data = <T>(r: RpcResult) => {
  if (r.status !== 200) throw new Error(`${r.status}: ${r.text}`);
  return r.json!.result!.data as T;
};
const lastAuditId = async () => (await panel.auth.audit.queryAudit({ limit: 1 }))[0]?.id ?? 0;
const auditSince = async (mark: number) => (await panel.auth.audit.queryAudit({ limit: 1000 })).filter((r) => r.id > mark).reverse();

describe("a unit that fails, then recovers", () => {
  it("one firing message with the unit, the rule, the diagnosis headline and a link to the unit page", async () => {
    await expect.poll(() => receiver.payloads<AlertWebhookPayload>().filter((p) => p.unit === FAILED).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
    const p = receiver.payloads<AlertWebhookPayload>().find((x) => x.unit === FAILED)!;
    expect(p).toMatchObject({ schema: "gpudeck.alert.v1", host: HOST, rule: "unit-failed", state: "firing", count: 1 });
    expect(p.link).toBe(`https://gpudeck.example/hosts/${HOST}/units/${FAILED}`);
    expect(p.diagnosis?.headline).toMatch(/ExecStartPre|start-pre|preparation/i);
    expect(new Date(p.since).getTime()).toBeGreaterThan(0);
    // on the Alerts page too, open, with the same diagnosis
    const open = data<{ alerts: AlertView[] }>(await query("alerts.list", { state: "open" }, "vera")).alerts;
    expect(open.find((a) => a.unit === FAILED)).toMatchObject({ rule: "unit-failed", resolvedAtMs: null, diagnosis: { headline: p.diagnosis!.headline } });
  });

  it("reset-failed: one resolution; nothing repeats", async () => {
    const before = receiver.payloads<AlertWebhookPayload>().filter((p) => p.unit === FAILED);
    const r = await mutate("units.resetFailed", { host: HOST, name: FAILED });
    expect(r.status, r.text).toBe(200);
    await expect
      .poll(() => receiver.payloads<AlertWebhookPayload>().filter((p) => p.unit === FAILED && p.state === "resolved").length, { timeout: 10_000 })
      .toBe(1);
    await new Promise((res) => setTimeout(res, 1000));
    const mine = receiver.payloads<AlertWebhookPayload>().filter((p) => p.unit === FAILED);
    expect(mine.map((p) => p.state)).toEqual([...before.map((p) => p.state), "resolved"]);
    expect(before.filter((p) => p.state === "firing")).toHaveLength(1);
    const history = data<{ alerts: AlertView[] }>(await query("alerts.list", { state: "resolved", unit: FAILED }, "vera")).alerts;
    expect(history[0]!.resolvedAtMs).not.toBeNull();
  });
});

describe("channels: admins only, secrets never shown back, everything audited", () => {
  let id = "";

  it("a viewer and an operator are refused, each audited once", async () => {
    const mark = await lastAuditId();
    for (const u of ["vera", "otto"]) {
      const r = await mutate("alerts.channels.add", { type: "slack", name: "ml", url: hook.url(SECRET_PATH) }, u);
      expect(r.status).toBe(403);
    }
    // and "push": the browsers people subscribed (server/push/), read-only like the environment's
    expect(data<ChannelView[]>(await query("alerts.channels.list")).map((c) => c.name)).toEqual(["GPUDECK_ALERT_WEBHOOK_URL", "push"]);
    const rows = await auditSince(mark);
    expect(rows.map((r) => [r.user, r.action, r.outcome])).toEqual([
      ["vera", "alert.channel.add", "refused"],
      ["otto", "alert.channel.add", "refused"],
    ]);
    expect(JSON.stringify(rows)).not.toContain("s3cr3t");
  });

  it("input that fails validation is refused and audited once", async () => {
    const mark = await lastAuditId();
    const r = await mutate("alerts.channels.add", { type: "slack", name: "ml", url: "ftp://x", extra: 1 });
    expect(r.status).toBe(400);
    expect((await auditSince(mark)).map((a) => [a.action, a.outcome])).toEqual([["alert.channel.add", "refused"]]);
  });

  it("an admin adds a Slack channel: the view has a hint, never the URL", async () => {
    const mark = await lastAuditId();
    const view = data<ChannelView>(await mutate("alerts.channels.add", { type: "slack", name: "ml", url: hook.url(SECRET_PATH) }));
    id = view.id;
    expect(view.urlHint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/…oken$/);
    const listed = await query("alerts.channels.list");
    expect(listed.text).not.toContain("s3cr3t");
    expect(listed.text).not.toContain("/env-hook");
    expect((await auditSince(mark)).map((a) => [a.action, a.outcome])).toEqual([["alert.channel.add", "ok"]]);
    expect(JSON.stringify(await auditSince(mark))).not.toContain("s3cr3t");
  });

  it("a second channel of the same name is refused", async () => {
    const r = await mutate("alerts.channels.add", { type: "webhook", name: "ml", url: hook.url("/x") });
    expect(r.status).toBe(400);
    expect(r.json?.error?.message).toMatch(/exists already/);
  });

  it("send test: queued at once, delivered to the receiver, shown in the delivery log", async () => {
    const r = data<{ queued: boolean; messageId: number }>(await mutate("alerts.channels.test", { id }));
    expect(r.queued).toBe(true);
    await expect.poll(() => hook.received.filter((x) => x.path === SECRET_PATH).length, { timeout: 5000 }).toBe(1);
    expect((hook.received[0]!.json as { text: string }).text).toContain("gpudeck test message (ml)");
    await expect
      .poll(async () => data<{ deliveries: DeliveryView[] }>(await query("alerts.deliveries", { channelId: id })).deliveries[0]?.status, { timeout: 5000 })
      .toBe("sent");
    expect(data<ChannelView[]>(await query("alerts.channels.list")).find((c) => c.id === id)!.lastDelivery).toMatchObject({ ok: true });
  });

  it("update and remove: audited, the environment's channel is read-only", async () => {
    const mark = await lastAuditId();
    const updated = data<ChannelView>(await mutate("alerts.channels.update", { id, name: "ml-oncall", url: hook.url("/hooks/new-secret-123456") }));
    expect(updated.name).toBe("ml-oncall");
    const envId = data<ChannelView[]>(await query("alerts.channels.list")).find((c) => c.source === "env")!.id;
    expect((await mutate("alerts.channels.remove", { id: envId })).status).toBe(400);
    expect(data<{ removed: string }>(await mutate("alerts.channels.remove", { id })).removed).toBe(id);
    const rows = await auditSince(mark);
    expect(rows.map((a) => [a.action, a.outcome])).toEqual([
      ["alert.channel.update", "ok"],
      ["alert.channel.remove", "refused"],
      ["alert.channel.remove", "ok"],
    ]);
    expect(JSON.stringify(rows)).not.toContain("new-secret");
  });
});

describe("silences", () => {
  it("an operator silences a unit they may restart, with why; not one they may not, nor a pattern; viewers not at all", async () => {
    const mark = await lastAuditId();
    const ok = data<{ id: number; createdBy: string; active: boolean }>(
      await mutate("alerts.silences.add", { host: HOST, unit: "vllm-embed-small.service", minutes: 60, reason: "reloading weights" }, "otto"),
    );
    expect(ok).toMatchObject({ createdBy: "otto", active: true });
    expect((await mutate("alerts.silences.add", { host: HOST, unit: FAILED, minutes: 60, reason: "x" }, "otto")).status).toBe(403);
    expect((await mutate("alerts.silences.add", { host: "*", unit: "vllm-embed-*", minutes: 60, reason: "x" }, "otto")).status).toBe(403);
    expect((await mutate("alerts.silences.add", { host: HOST, minutes: 60, reason: "x" }, "vera")).status).toBe(403);
    expect((await mutate("alerts.silences.add", { host: HOST, minutes: 60 })).status).toBe(400);
    expect(data<{ ended: number }>(await mutate("alerts.silences.remove", { id: ok.id }, "otto")).ended).toBe(ok.id);
    const rows = await auditSince(mark);
    expect(rows.map((a) => [a.user, a.action, a.outcome])).toEqual([
      ["otto", "alert.silence.add", "ok"],
      ["otto", "alert.silence.add", "refused"],
      ["otto", "alert.silence.add", "refused"],
      ["vera", "alert.silence.add", "refused"],
      ["ada", "alert.silence.add", "refused"],
      ["otto", "alert.silence.remove", "ok"],
    ]);
    expect(rows[0]!.reason).toBe("reloading weights");
    const listed = data<{ id: number; active: boolean; endedBy: string | null }[]>(await query("alerts.silences.list", undefined, "vera"));
    expect(listed.find((s) => s.id === ok.id)).toMatchObject({ active: false, endedBy: "otto" });
  });
});
