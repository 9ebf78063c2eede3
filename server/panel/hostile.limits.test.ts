/**
 * Hostile volume against the panel's real API endpoint (beside ./hostile.test.ts, which sends
 * hostile input): one account, or one address, repeating what is cheap for it and dear for the
 * panel (sessions, streams, audit rows, expensive queries, big batches). Each is capped, and what
 * goes over the cap gets a sentence that names the setting.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../agent/main";
import { loadPanelConfig } from "./config";
import {
  addUser,
  call,
  HOST,
  hostConnected,
  login,
  openEventStream,
  panelRequest,
  PASSWORD,
  PEER,
  readSse,
  send,
  startTestAgent,
  startTestPanel,
  type TestPanel,
} from "./panelTestHarness";
import { ANONYMOUS_REFUSALS_PER_MINUTE, ANONYMOUS_REFUSALS_TOTAL_PER_MINUTE } from "./refusals";

let agent: RunningAgent;
beforeAll(async () => {
  agent = await startTestAgent();
}, 30_000);
afterAll(async () => {
  await agent?.close();
});

type Stream = Awaited<ReturnType<typeof openEventStream>>;

it("the limits' defaults: 32 streams and 20 sessions per user, 120 expensive queries a minute, 20 calls a batch", () => {
  const config = loadPanelConfig({ GPUDECK_DATA_DIR: "/tmp/gpudeck-defaults" });
  expect(config).toMatchObject({ streamsPerUser: 32, sessionsPerUser: 20, queriesPerMinute: 120, batchMax: 20 });
  expect(() => loadPanelConfig({ GPUDECK_SESSIONS_PER_USER: "2.5" })).toThrow(/GPUDECK_SESSIONS_PER_USER must be a whole number/);
});

describe("one account signed in many times", () => {
  let tp: TestPanel;
  const open: Stream[] = [];
  beforeAll(async () => {
    tp = await startTestPanel(agent, { env: { GPUDECK_SESSIONS_PER_USER: "3", GPUDECK_STREAMS_PER_SESSION: "2", GPUDECK_STREAMS_PER_USER: "3" } });
    await addUser(tp.panel, "vera", "viewer");
    await hostConnected(tp.panel);
  }, 30_000);
  afterAll(async () => {
    await Promise.all(open.map((s) => s.close()));
    await tp?.close();
  });

  it("holds at most GPUDECK_STREAMS_PER_USER streams across its sessions", async () => {
    const [s1, s2] = [await login(tp.panel, "vera"), await login(tp.panel, "vera")];
    for (const cookie of [s1, s1, s2]) {
      const s = await openEventStream(tp.panel, cookie);
      await s.until(/"kind":"host-snapshot"/);
      open.push(s);
    }
    const res = await tp.panel.handle(panelRequest("events.watch", { sse: true, input: { watch: "host", host: HOST }, cookie: s2 }));
    const text = await readSse(res, (t) => /serialized-error\ndata: [^\n]*\n/.test(t));
    expect(text).toMatch(/This account already has 3 live streams open across its sessions \(at most 3, GPUDECK_STREAMS_PER_USER\)/);
    expect(tp.panel.streams.openCount).toBe(3);
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  it("holds at most GPUDECK_SESSIONS_PER_USER sessions: signing in once more ends the oldest, audited as session.limit", async () => {
    const user = (await tp.panel.auth.users.getUser("vera"))!;
    await tp.panel.auth.sessions.endAllSessions(user.id);
    const cookies: string[] = [];
    for (let i = 0; i < 5; i++) {
      cookies.push(await login(tp.panel, "vera"));
      tp.clock.offsetMs += 1000; // distinct creation times: "oldest" is well defined
    }
    expect(await tp.panel.auth.sessions.listSessions(user.id)).toHaveLength(3);
    const me = async (cookie: string) => ((await call(tp.panel, "session.me", { method: "GET", cookie })).json?.result?.data as { user: unknown }).user;
    expect(await me(cookies[0]!)).toBeNull();
    expect(await me(cookies[1]!)).toBeNull();
    for (const c of cookies.slice(2)) expect(await me(c)).toMatchObject({ name: "vera" });
    const rows = await tp.panel.auth.audit.queryAudit({ action: "session.limit", limit: 10 });
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ user: "vera", outcome: "ok" });
    expect(rows[0]!.detail).toMatch(/3 sessions open \(GPUDECK_SESSIONS_PER_USER\): the oldest session was ended/);
  });
});

/** `count` calls of one procedure in batches of `size` (the browser's batching, done by hand). */
async function batched(tp: TestPanel, procedurePath: string, input: unknown, count: number, size: number, headers: Record<string, string> = {}) {
  const statuses: number[] = [];
  for (let sent = 0; sent < count; sent += size) {
    const n = Math.min(size, count - sent);
    const body = Object.fromEntries(Array.from({ length: n }, (_, i) => [String(i), input]));
    const r = await send(tp.panel, panelRequest(Array(n).fill(procedurePath).join(","), { query: "batch=1", body: JSON.stringify(body), headers }));
    statuses.push(r.status);
  }
  return statuses;
}

const auditCount = async (tp: TestPanel, action: string) => (await tp.panel.auth.audit.queryAudit({ action, limit: 1000 })).length;

describe("audit flooding through setup.complete", () => {
  let tp: TestPanel;
  beforeAll(async () => {
    tp = await startTestPanel(agent, { panel: { background: false, refusalAuditPerMinute: 60 } });
  }, 30_000);
  afterAll(async () => tp?.close());

  it("before setup: 200 wrong tokens from one address leave a handful of rows", async () => {
    await tp.panel.auth.users.ensureSetupToken();
    await batched(tp, "setup.complete", { token: "x".repeat(43), username: "root", password: PASSWORD }, 200, 20);
    // and 200 that fail validation (refused by tRPC before the procedure)
    await batched(tp, "setup.complete", { token: 1, username: "root", password: PASSWORD }, 200, 20);
    expect(await auditCount(tp, "setup")).toBeLessThanOrEqual(ANONYMOUS_REFUSALS_PER_MINUTE * 2);
    expect(await auditCount(tp, "setup")).toBeGreaterThan(0);
  });

  it("from many addresses: at most the global cap, and one row saying the rest were not recorded", async () => {
    const before = await auditCount(tp, "setup");
    for (let i = 0; i < 60; i++) {
      await call(tp.panel, "setup.complete", {
        input: { token: "y".repeat(43), username: "root", password: PASSWORD },
        headers: { "x-gpudeck-peer": `10.1.${i}.1` },
      });
    }
    expect((await auditCount(tp, "setup")) - before).toBeLessThanOrEqual(ANONYMOUS_REFUSALS_TOTAL_PER_MINUTE);
    const notes = await tp.panel.auth.audit.queryAudit({ action: "audit.refusals", limit: 10 });
    expect(notes.some((n) => /refused setup requests from all addresses/.test(n.detail ?? ""))).toBe(true);
  });

  it("once an admin exists, setup.complete is refused with a sentence and no audit row", async () => {
    tp.clock.offsetMs += 120_000; // a new minute: the caps above would let rows through again
    const { token } = (await tp.panel.auth.users.ensureSetupToken())!;
    const ok = await call(tp.panel, "setup.complete", { input: { token, username: "root", password: PASSWORD }, headers: { "x-gpudeck-peer": "10.2.0.1" } });
    expect(ok.status, ok.text).toBe(200);
    const before = (await tp.panel.auth.audit.queryAudit({ limit: 1 }))[0]!.id;
    const statuses = await batched(tp, "setup.complete", { token, username: "root2", password: PASSWORD }, 200, 20);
    expect(new Set(statuses)).toEqual(new Set([403]));
    const r = await call(tp.panel, "setup.complete", { input: { token, username: "root3", password: PASSWORD } });
    expect(r.json?.error?.message).toMatch(/setup is already done \(an admin exists\); sign in/);
    expect((await tp.panel.auth.audit.queryAudit({ limit: 1000 })).filter((row) => row.id > before)).toEqual([]);
  });
});

describe("audit flooding through refused proxy identities", () => {
  it("200 requests naming an unknown user through the trusted proxy leave a handful of rows", async () => {
    const tp = await startTestPanel(agent, {
      env: { GPUDECK_PROXY_AUTH_HEADER: "x-forwarded-user", GPUDECK_TRUSTED_PROXIES: PEER },
      panel: { background: false, refusalAuditPerMinute: 60 },
    });
    try {
      for (let i = 0; i < 200; i++) {
        const r = await call(tp.panel, "session.me", { method: "GET", headers: { "x-forwarded-user": `nobody${i % 3}` } });
        expect(r.status).toBe(200);
      }
      const rows = await tp.panel.auth.audit.queryAudit({ action: "proxy-login", limit: 1000 });
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.length).toBeLessThanOrEqual(ANONYMOUS_REFUSALS_PER_MINUTE);
      expect(rows[0]).toMatchObject({ outcome: "refused", sourceAddr: PEER });
    } finally {
      await tp.close();
    }
  });
});

describe("expensive queries and big batches", () => {
  let tp: TestPanel;
  let vera: string;
  beforeAll(async () => {
    tp = await startTestPanel(agent, { env: { GPUDECK_QUERIES_PER_MINUTE: "5" } });
    await addUser(tp.panel, "vera", "viewer");
    vera = await login(tp.panel, "vera");
    await hostConnected(tp.panel);
  }, 30_000);
  afterAll(async () => tp?.close());

  it("a batch over GPUDECK_BATCH_MAX (20) is refused whole with a sentence, and reaches no procedure", async () => {
    const n = 21;
    const body = Object.fromEntries(Array.from({ length: n }, (_, i) => [String(i), { host: HOST, name: "vllm-embed-small.service" }]));
    const r = await send(tp.panel, panelRequest(Array(n).fill("units.restart").join(","), { query: "batch=1", body: JSON.stringify(body), cookie: vera }));
    expect(r.status).toBe(400);
    expect((r.json as unknown as { error: { message: string } }[])[0]!.error.message).toMatch(
      /A batch of 21 calls is over this panel's limit of 20 \(GPUDECK_BATCH_MAX\); send fewer calls in one request\./,
    );
    // 20 is fine (refused one by one: a viewer cannot restart)
    const ok = await send(tp.panel, panelRequest(Array(20).fill("session.me").join(","), { method: "GET", query: "batch=1", cookie: vera }));
    expect(ok.status, ok.text).toBe(200);
  });

  it("expensive queries over GPUDECK_QUERIES_PER_MINUTE get TOO_MANY_REQUESTS with a sentence and Retry-After", async () => {
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof call>> | null = null;
    for (let i = 0; i < 7; i++) {
      last = await call(tp.panel, "units.diagnose", { method: "GET", input: { host: HOST, name: "vllm-embed-small.service" }, cookie: vera });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(last!.json?.error?.message).toMatch(
      /5 expensive queries .* in the last minute, this panel's limit \(GPUDECK_QUERIES_PER_MINUTE\); try again in \d+ s\./,
    );
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    const history = await call(tp.panel, "gpus.history", { method: "GET", input: { host: HOST, sinceMs: 0 }, cookie: vera });
    expect(history.status).toBe(429);
    // cheap queries are not counted
    expect((await call(tp.panel, "units.list", { method: "GET", cookie: vera })).status).toBe(200);
  });
});
