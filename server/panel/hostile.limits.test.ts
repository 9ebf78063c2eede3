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
  readSse,
  startTestAgent,
  startTestPanel,
  type TestPanel,
} from "./panelTestHarness";

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
