/**
 * Two panel replicas in one process, each with its own pool, bus and fleet, on one PostgreSQL,
 * watching one agent: what one replica does, the other knows. Their buses do not poll here
 * (an hour), so only NOTIFY can carry a change across, and their streams re-check sessions only
 * every minute, so a stream that ends at once ended because of a panel event. (The same, as two
 * real processes behind HTTP: e2e/replicas/.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../agent/main";
import { testDatabasesForFile } from "../store/testing/databases";
import { addUser, call, HOST, hostConnected, login, openEventStream, PASSWORD, startTestAgent, startTestPanel, type TestPanel } from "./panelTestHarness";

const dbs = testDatabasesForFile("two panel replicas");
const EMBED = "vllm-embed-small.service";

describe.skipIf(!dbs.dialects.includes("postgres"))("two replicas on one PostgreSQL", () => {
  let agent: RunningAgent;
  let a: TestPanel;
  let b: TestPanel;

  beforeAll(async () => {
    agent = await startTestAgent();
    const db = await dbs.fresh("postgres");
    const replica = () =>
      startTestPanel(agent, {
        // replicas share one key for the secrets they store (README: Secrets and outbound requests)
        env: { GPUDECK_DATABASE_URL: db.databaseUrl!, GPUDECK_SECRET_KEY: "ab".repeat(32) },
        panel: { streamRecheckMs: 60_000, events: { pollMs: 3_600_000 } },
      });
    [a, b] = [await replica(), await replica()];
    await addUser(a.panel, "ada", "admin");
    await addUser(a.panel, "otto", "operator", ["vllm-*"]);
    await Promise.all([hostConnected(a.panel), hostConnected(b.panel)]);
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await agent?.close();
  });

  it("a cookie from one works on the other", async () => {
    const cookie = await login(b.panel, "ada");
    const me = await call(a.panel, "session.me", { method: "GET", cookie });
    expect(me.json?.result?.data).toMatchObject({ user: { name: "ada", role: "admin" } });
  });

  it("an action on one is in the other's audit log; the same action on the other within the window needs confirmation", async () => {
    const [onA, onB] = [await login(a.panel, "otto"), await login(b.panel, "otto")];
    const first = await call(b.panel, "units.restart", { input: { host: HOST, name: EMBED, reason: "replica test" }, cookie: onB });
    expect(first.status, first.text).toBe(200);
    const audit = await call(a.panel, "audit.list", { method: "GET", input: { action: "restart", limit: 5 }, cookie: onA });
    expect((audit.json?.result?.data as { rows: { unit: string; reason: string }[] }).rows[0]).toMatchObject({ unit: EMBED, reason: "replica test" });
    const again = await call(a.panel, "units.restart", { input: { host: HOST, name: EMBED }, cookie: onA });
    expect(again.status).toBe(409);
    expect(again.json?.error?.message).toMatch(/^Confirmation required: otto restarted vllm-embed-small\.service \d+ s ago/);
  });

  it("failed sign-ins alternating between them trip the shared limit at the total", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const r = await call(i % 2 ? b.panel : a.panel, "session.login", { input: { username: "ada", password: `wrong guess number ${i}` } });
      statuses.push(r.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
  });

  it("disabling a user on one ends their open stream on the other at once", async () => {
    await addUser(a.panel, "vera", "viewer");
    const onB = await login(b.panel, "vera", PASSWORD, { "x-gpudeck-peer": "10.9.9.9" });
    const stream = await openEventStream(b.panel, onB);
    await stream.until(/"kind":"host-snapshot"/);
    const admin = await login(a.panel, "ada", PASSWORD, { "x-gpudeck-peer": "10.8.8.8" });
    const t0 = Date.now();
    const off = await call(a.panel, "users.setDisabled", { input: { username: "vera", disabled: true }, cookie: admin });
    expect(off.status, off.text).toBe(200);
    const text = await stream.until(/event: serialized-error\ndata: [^\n]*\n/, 2000);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(text).toMatch(/session has ended/);
  });

  it("a host added on one is watched by the other, and removed from both", async () => {
    const admin = await login(a.panel, "ada", PASSWORD, { "x-gpudeck-peer": "10.7.7.7" });
    const added = await call(a.panel, "hosts.add", { input: { name: "gpu-extra", url: agent.url, token: agent.token }, cookie: admin });
    expect(added.status, added.text).toBe(200);
    await expect.poll(() => b.panel.fleet.get("gpu-extra")?.config.url, { timeout: 2000 }).toBe(agent.url);
    const removed = await call(a.panel, "hosts.remove", { input: { name: "gpu-extra" }, cookie: admin });
    expect(removed.status, removed.text).toBe(200);
    await expect.poll(() => b.panel.fleet.get("gpu-extra"), { timeout: 2000 }).toBeUndefined();
  });
});
