/**
 * Web Push end to end: a real panel over a real agent on a simulated host, and a local push
 * service (./testing/localPushService.ts) that decrypts what it receives with each browser's own
 * keys. Browsers subscribe through the panel's endpoint before the fleet starts; the simulator's
 * failing unit then opens an alert and what each "phone" would show is read back: the headline,
 * host, unit, the unit page and the alert's id; a 410 removes that subscription; a group member
 * who is reached twice (push and push:oncall) is notified once; push.test reaches only the caller.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../agent/main";
import type { AlertView } from "../contract/alerts";
import type { PushDeviceView } from "../contract/push";
import type { Panel } from "../panel/instance";
import { addUser, call, HOST, login, startTestAgent, startTestPanel, type RpcResult, type TestPanel } from "../panel/panelTestHarness";
import { loadPushConfig } from "./config";
import { PushService } from "./service";
import { LocalPushService } from "./testing/localPushService";

const FAILED = "vllm-llama-70b.service"; // the simulator's unit whose ExecStartPre fails

let agent: RunningAgent;
let tp: TestPanel;
let panel: Panel;
const phones = new LocalPushService();
const cookie: Record<string, string> = {};
const headers = { host: "gpudeck.example", origin: "https://gpudeck.example" };
const mutate = (path: string, input: unknown, user: string) => call(panel, path, { input, cookie: cookie[user], headers });
const query = (path: string, user: string, input?: unknown) =>
  call(panel, path, { method: "GET", input, cookie: cookie[user], headers: { host: "gpudeck.example" } });
const data = <T>(r: RpcResult) => {
  if (r.status !== 200) throw new Error(`${r.status}: ${r.text}`);
  return r.json!.result!.data as T;
};

beforeAll(async () => {
  await phones.start();
  agent = await startTestAgent();
  tp = await startTestPanel(agent, {
    env: {
      GPUDECK_PUBLIC_URL: "https://gpudeck.example",
      GPUDECK_PUSH_ALLOW_HTTP_LOOPBACK: "1",
      GPUDECK_PUSH_GROUPS: JSON.stringify({ oncall: ["bob"] }),
    },
    // no background: the fleet and the alerts start once the browsers have subscribed
    panel: { background: false, alerts: { tickMs: 200, groupWindowMs: 300, delivery: { pollMs: 50, backoffBaseMs: 100, backoffMaxMs: 500 } } },
  });
  panel = tp.panel;
  await addUser(panel, "ada", "admin");
  await addUser(panel, "bob", "operator", ["vllm-*"]);
  await addUser(panel, "vera", "viewer");
  for (const u of ["ada", "bob", "vera"]) cookie[u] = await login(panel, u, undefined, headers);
}, 30_000);

afterAll(async () => {
  panel?.services.alerts.stop();
  await tp?.close();
  await agent?.close();
  await phones.stop();
});

describe("subscribing", () => {
  it("push.vapidPublicKey: an uncompressed P-256 point in base64url, the same for a second replica on the database", async () => {
    const { publicKey } = data<{ publicKey: string }>(await query("push.vapidPublicKey", "vera"));
    expect(publicKey).toMatch(/^[A-Za-z0-9_-]+$/);
    const raw = Buffer.from(publicKey, "base64url");
    expect([raw.length, raw[0]]).toEqual([65, 4]);
    const replica = new PushService({ store: panel.services.store, config: loadPushConfig({}), panelUrl: "https://gpudeck.example", log: () => {} });
    expect(await replica.publicKey()).toBe(publicKey);
  });

  it("needs a signed-in caller", async () => {
    expect((await call(panel, "push.vapidPublicKey", { method: "GET", headers: { host: "gpudeck.example" } })).status).toBe(401);
    expect((await call(panel, "push.subscribe", { input: { subscription: phones.subscription("nobody") }, headers })).status).toBe(401);
  });

  it("refuses an http endpoint off loopback, and input that is not a PushSubscription", async () => {
    const good = phones.subscription("unused");
    const plain = await mutate("push.subscribe", { subscription: { ...good, endpoint: "http://push.example.com/x" } }, "ada");
    expect(plain.status).toBe(400);
    expect(plain.json?.error?.message).toMatch(/must be https/);
    expect((await mutate("push.subscribe", { subscription: { ...good, keys: { ...good.keys, extra: "x" } } }, "ada")).status).toBe(400);
    expect((await mutate("push.subscribe", { subscription: good, more: 1 }, "ada")).status).toBe(400);
  });

  it("ada, bob and vera subscribe a browser each (audited, no endpoint in the audit log)", async () => {
    for (const [user, phone] of [
      ["ada", "ada-phone"],
      ["bob", "bob-phone"],
      ["vera", "vera-old"],
    ] as const) {
      expect((await mutate("push.subscribe", { subscription: phones.subscription(phone) }, user)).status).toBe(200);
    }
    const audit = (await panel.auth.audit.queryAudit({ limit: 20 })).filter((r) => r.action === "push.subscribe" && r.outcome === "ok");
    expect(audit.map((r) => r.user).sort()).toEqual(["ada", "bob", "vera"]);
    expect(JSON.stringify(audit)).not.toContain("/push/");
    expect(data<{ devices: PushDeviceView[] }>(await query("push.list", "ada")).devices).toHaveLength(1);
  });
});

describe("an alert that fires", () => {
  it("reaches each phone with the headline, host, unit, unit page and alert id", async () => {
    phones.status.set("/push/vera-old", 410);
    panel.fleet.start();
    panel.services.alerts.start();
    const firing = (name: string) => phones.for(name).filter((r) => r.payload?.unit === FAILED && r.payload.state === "firing");
    await expect.poll(() => firing("ada-phone").length, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
    const shown = firing("ada-phone")[0]!;
    expect(shown.error).toBeNull();
    const alert = data<{ alerts: AlertView[] }>(await query("alerts.list", "ada", { state: "open" })).alerts.find((a) => a.unit === FAILED)!;
    expect(shown.payload).toMatchObject({
      schema: "gpudeck.push.v1",
      kind: "alert",
      host: HOST,
      unit: FAILED,
      url: `/hosts/${HOST}/units/${FAILED}`,
      alertId: alert.id,
      tag: `gpudeck-alert-${alert.id}`,
    });
    expect(shown.payload!.title).toContain(FAILED);
    expect(shown.payload!.body).toBe(alert.diagnosis!.headline);
    // signed with the panel's VAPID key, encrypted as RFC 8291 says
    const { publicKey } = data<{ publicKey: string }>(await query("push.vapidPublicKey", "ada"));
    expect(shown.headers.authorization).toMatch(new RegExp(`^vapid t=[\\w-]+\\.[\\w-]+\\.[\\w-]+, k=${publicKey}$`));
    expect(shown.headers["content-encoding"]).toBe("aes128gcm");
    expect(shown.headers.urgency).toBe("high");
    // bob is in push and in push:oncall: one notification
    await expect.poll(() => firing("bob-phone").length, { timeout: 10_000 }).toBe(1);
  }, 30_000);

  it("a subscription the push service says is gone (410) is removed", async () => {
    await expect.poll(() => phones.for("vera-old").length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    await expect.poll(async () => data<{ devices: PushDeviceView[] }>(await query("push.list", "vera")).devices.length, { timeout: 10_000 }).toBe(0);
  });

  it("push:oncall reaches bob's browsers only", async () => {
    const bob = data<{ devices: PushDeviceView[] }>(await query("push.list", "bob")).devices;
    const fake = { alerts: [] } as unknown as Parameters<PushService["recipients"]>[1];
    expect(await panel.services.push.recipients("push:oncall", fake)).toEqual(bob.map((d) => d.id));
    expect((await panel.services.push.recipients("push", fake)).length).toBe(2);
  });
});

describe("push.test and unsubscribing", () => {
  it("push.test reaches the caller's own phone only", async () => {
    const bobBefore = phones.for("bob-phone").length;
    const r = data<{ devices: number }>(await mutate("push.test", undefined, "ada"));
    expect(r.devices).toBe(1);
    await expect.poll(() => phones.for("ada-phone").some((x) => x.payload?.kind === "test"), { timeout: 10_000 }).toBe(true);
    expect(phones.for("ada-phone").find((x) => x.payload?.kind === "test")!.payload).toMatchObject({ alertId: null, url: "/alerts", host: null });
    expect(phones.for("bob-phone").length).toBe(bobBefore);
    expect((await mutate("push.test", undefined, "vera")).status).toBe(400);
  });

  it("push.unsubscribe removes only the caller's subscription", async () => {
    const ada = phones.subscription("ada-phone");
    expect(data<{ removed: boolean }>(await mutate("push.unsubscribe", { endpoint: ada.endpoint }, "bob")).removed).toBe(false);
    expect(data<{ removed: boolean }>(await mutate("push.unsubscribe", { endpoint: ada.endpoint }, "ada")).removed).toBe(true);
    expect(data<{ devices: PushDeviceView[] }>(await query("push.list", "ada")).devices).toEqual([]);
  });
});
