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
import {
  addUser,
  call,
  bearerHeaders,
  decodeSse,
  HOST,
  hostConnected,
  login,
  openEventStream,
  openStream,
  PASSWORD,
  panelRequest,
  readSse,
  startTestAgent,
  startTestPanel,
  type TestPanel,
} from "./panelTestHarness";

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

  it("demoting an operator on one ends their journal stream on the other within 2 s, with FORBIDDEN", async () => {
    await addUser(a.panel, "opal", "operator", ["vllm-*"]);
    const onB = await login(b.panel, "opal", PASSWORD, { "x-gpudeck-peer": "10.9.9.10" });
    const journal = await openStream(b.panel, "units.followJournal", onB, { host: HOST, name: EMBED });
    await journal.until(/data: /);
    // a change of units alone keeps what the role allows: the stream stays
    const admin = await login(a.panel, "ada", PASSWORD, { "x-gpudeck-peer": "10.8.8.9" });
    const units = await call(a.panel, "users.update", { input: { username: "opal", unitPatterns: ["vllm-embed-*"] }, cookie: admin });
    expect(units.status, units.text).toBe(200);
    await expect(journal.until(/event: serialized-error/, 500)).rejects.toThrow(/did not show/);
    const t0 = Date.now();
    const demoted = await call(a.panel, "users.update", { input: { username: "opal", role: "viewer" }, cookie: admin });
    expect(demoted.status, demoted.text).toBe(200);
    const text = await journal.until(/event: serialized-error\ndata: [^\n]*\n/, 2000);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(text).toMatch(/FORBIDDEN|Not allowed any more: viewers cannot read journals/);
    // and a new one is refused outright
    const again = await openStream(b.panel, "units.followJournal", onB, { host: HOST, name: EMBED });
    expect(await again.until(/event: serialized-error\ndata: [^\n]*\n/, 2000)).toMatch(/viewers cannot read journals/);
  });

  it("an API token revoked on one is refused by the other at once, and its open stream there ends within 2 s", async () => {
    const admin = await login(a.panel, "ada", PASSWORD, { "x-gpudeck-peer": "10.6.6.6" });
    const made = await call(a.panel, "tokens.create", { input: { name: "ci", role: "operator", units: ["vllm-*"], expiresInDays: 7 }, cookie: admin });
    expect(made.status, made.text).toBe(200);
    const { id, token } = made.json!.result!.data as { id: number; token: string };
    expect((await call(b.panel, "units.list", { method: "GET", headers: bearerHeaders(token) })).status).toBe(200);
    const res = await b.panel.handle(panelRequest("events.watch", { sse: true, input: { watch: "host", host: HOST }, headers: bearerHeaders(token) }));
    expect(res.status).toBe(200);
    const reading = readSse(res, (text) => /event: serialized-error/.test(text), 5000);
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    expect((await call(a.panel, "tokens.revoke", { input: { id }, cookie: admin })).status).toBe(200);
    const refused = await call(b.panel, "units.list", { method: "GET", headers: bearerHeaders(token) });
    expect(refused.status).toBe(401);
    expect(decodeSse(await reading)).toMatch(/revoked or expired/);
    expect(Date.now() - t0).toBeLessThan(2000);
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
