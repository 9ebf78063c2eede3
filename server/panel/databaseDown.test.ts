/**
 * A replica whose PostgreSQL goes away (and comes back): changes are refused with a sentence
 * saying so (SERVICE_UNAVAILABLE), session.me carries it for the page's banner, pages answer 503
 * with it, /healthz says the database and the LISTEN connection are down (503), and open browser
 * streams keep running: agent data does not go through the database. When it is back, all of it
 * works again without a restart.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../agent/main";
import { testDatabasesForFile } from "../store/testing/databases";
import type { PanelHealth } from "./health";
import { addUser, call, HOST, hostConnected, login, openEventStream, startTestAgent, startTestPanel, type TestPanel } from "./panelTestHarness";
import { createPanelServer } from "./serve";

const dbs = testDatabasesForFile("a replica losing its database");
const pgOnly = !dbs.dialects.includes("postgres");
const UNIT = "vllm-embed-small.service";

async function get(port: number, path: string, cookie = ""): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, headers: { host: `127.0.0.1:${port}`, cookie } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function until<T>(what: string, probe: () => Promise<T | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== false) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(pgOnly)("a replica that loses its PostgreSQL", () => {
  let agent: RunningAgent;
  let tp: TestPanel;
  let server: http.Server;
  let port: number;
  let cookie: string;

  beforeAll(async () => {
    agent = await startTestAgent();
    const db = await dbs.fresh("postgres");
    tp = await startTestPanel(agent, {
      env: { GPUDECK_DATABASE_URL: db.databaseUrl! },
      panel: { streamRecheckMs: 200, events: { listenPingMs: 200 } },
    });
    await addUser(tp.panel, "ada", "admin");
    cookie = await login(tp.panel, "ada");
    await hostConnected(tp.panel);
    server = createPanelServer({ handle: (_req, res) => res.writeHead(200).end("the page"), panel: tp.panel });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    port = (server.address() as AddressInfo).port;
  }, 60_000);
  afterAll(async () => {
    await new Promise<void>((r) => server?.close(() => r()));
    await tp?.close();
    await agent?.close();
  });

  it("refuses clearly while it is away, keeps streams open, and works again when it is back", async () => {
    const healthy = await get(port, "/healthz");
    expect(healthy.status).toBe(200);
    expect(JSON.parse(healthy.body)).toMatchObject({ ok: true, database: { dialect: "postgres", ok: true }, listen: { ok: true } });
    const stream = await openEventStream(tp.panel, cookie);
    await stream.until(/"kind":"host-snapshot"/);

    const actionsBefore = agent.hub.recentActions(100_000).length;
    dbs.cluster().pause();
    try {
      const refused = await call(tp.panel, "units.restart", { input: { host: HOST, name: UNIT }, cookie });
      expect(refused.status).toBe(503);
      expect(agent.hub.recentActions(100_000).length).toBe(actionsBefore);
      expect(refused.json?.error?.message).toMatch(
        /^The panel cannot reach its database \(PostgreSQL\) right now: .+\. Sign-in, changes and actions are refused/,
      );
      const me = await call(tp.panel, "session.me", { method: "GET", cookie });
      expect(me.status).toBe(200);
      expect(me.json?.result?.data).toMatchObject({ user: null, unavailable: expect.stringMatching(/cannot reach its database/) });
      const page = await get(port, "/units", cookie.replace(/^/, ""));
      expect(page.status).toBe(503);
      expect(page.body).toMatch(/cannot reach its database \(PostgreSQL\)/);
      const down = await until(
        "/healthz saying both are down",
        async () => {
          const r = await get(port, "/healthz");
          const h = JSON.parse(r.body) as PanelHealth;
          return r.status === 503 && !h.database.ok && !h.listen.ok ? h : false;
        },
        5000,
      );
      expect(down.database.error).toBeTruthy();
      expect(JSON.stringify(down)).not.toMatch(/postgres:\/\//);
      // the browser's stream outlives several session re-checks that cannot reach the database
      const gpuSamples = (text: string) => (text.match(/"kind":"gpu"/g) ?? []).length;
      const before = gpuSamples(await stream.until(/"kind":"gpu"/));
      await new Promise((r) => setTimeout(r, 1000));
      // five more samples (one each 200 ms) after five re-checks (one each 200 ms) that could not answer
      const atLeast = (n: number) => new RegExp(`("kind":"gpu"[\\s\\S]*){${n}}`);
      expect(gpuSamples(await stream.until(atLeast(before + 5)))).toBeGreaterThan(before + 4);
    } finally {
      dbs.cluster().resume();
    }

    await until(
      "an action working again",
      async () => (await call(tp.panel, "units.get", { method: "GET", input: { host: HOST, name: UNIT }, cookie })).status === 200,
      15_000,
    );
    await until("/healthz ok again", async () => (await get(port, "/healthz")).status === 200, 15_000);
    void stream.close();
  }, 60_000);
});
