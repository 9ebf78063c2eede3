/**
 * The status page through the panel's routes, over a real agent on a simulated host: off by
 * default; admins turn it on behind a rotatable link token or as public; a viewer-less request
 * with the token sees every service, its state, uptime and incidents, and no command line, PID
 * or journal text; without the token it is refused; live over SSE until the link is rotated.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../agent/main";
import type { StatusDocument, StatusPageSettings } from "../contract/statusPage";
import type { Panel } from "../panel/instance";
import { addUser, call, HOST, login, readSse, startTestAgent, startTestPanel, type RpcResult, type TestPanel } from "../panel/panelTestHarness";
import type { IncomingMessage } from "node:http";
import { pageRedirect } from "../panel/serve";
import { handleStatusEvents, handleStatusJson, handleStatusPage } from "./http";
import { checkAccess, DEFAULT_SETTINGS } from "./settings";

let agent: RunningAgent;
let tp: TestPanel;
let panel: Panel;
let admin = "";
let forbidden: string[] = [];

beforeAll(async () => {
  agent = await startTestAgent();
  tp = await startTestPanel(agent, {
    panel: { alerts: { tickMs: 200, groupWindowMs: 200 }, statusPage: { documentTtlMs: 0, uptimeTtlMs: 0, settingsTtlMs: 0 } },
  });
  panel = tp.panel;
  await addUser(panel, "ada", "admin");
  admin = await login(panel, "ada");
  // what must never reach a stakeholder: every command line, PID and journal line the agent has
  const units = agent.hub.units();
  for (const u of units) {
    const d = await agent.hub.host.systemd.get(u.name).catch(() => null);
    for (const c of [...(d?.execStart ?? []), ...(d?.execStartPre ?? [])]) forbidden.push(c.argv.join(" "), c.path);
    for (const pid of [u.mainPid, u.controlPid]) if (pid > 0) forbidden.push(`"${pid}"`, ` ${pid} `, `:${pid},`);
    for (const line of await agent.hub.host.systemd.journal(u.name, 50)) if (line.message.length > 12) forbidden.push(line.message);
  }
  forbidden = [...new Set(forbidden)].filter((s) => s.trim().length > 3);
  expect(forbidden.length).toBeGreaterThan(5);
}, 30_000);

afterAll(async () => {
  await tp?.close();
  await agent?.close();
});

const get = (path: string, headers: Record<string, string> = {}) =>
  new Request(`http://127.0.0.1:3000${path}`, { headers: { host: "127.0.0.1:3000", ...headers } });
const page = (path: string, headers?: Record<string, string>) =>
  handleStatusPage(get(path, headers), panel.statusHttp, /^\/status\/([^/?]+)/.exec(path)?.[1] ?? null);
const json = (path: string, headers?: Record<string, string>) => handleStatusJson(get(path, headers), panel.statusHttp);
const mutate = (path: string, input?: unknown) => call(panel, path, { input, cookie: admin });
const data = <T>(r: RpcResult) => {
  if (r.status !== 200) throw new Error(`${r.status}: ${r.text}`);
  return r.json!.result!.data as T;
};

function expectNothingInternal(text: string) {
  for (const s of forbidden) expect(text, `leaked ${JSON.stringify(s)}`).not.toContain(s);
  expect(text).not.toMatch(/\/opt\/|\/usr\/|--port|ExecStart|journal/i);
}

describe("the status page", () => {
  let token = "";

  it("is off by default: 404 without a session; a signed-in admin may preview it", async () => {
    expect((await page("/status")).status).toBe(404);
    expect((await json("/api/status")).status).toBe(404);
    expect((await page("/status", { cookie: admin })).status).toBe(200);
  });

  it("on with a link token: refused without it (401) or with a wrong one (403)", async () => {
    const view = data<StatusPageSettings>(await mutate("statusPage.update", { enabled: true, public: false }));
    expect(view).toMatchObject({ enabled: true, public: false, tokenHint: null });
    const r = data<{ token: string; url: string }>(await mutate("statusPage.rotateToken"));
    token = r.token;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(r.url).toBe(`http://127.0.0.1:3000/status?token=${token}`);
    const settings = data<StatusPageSettings>(await call(panel, "statusPage.get", { method: "GET", cookie: admin }));
    expect(settings.tokenHint).toBe(`…${token.slice(-4)}`);
    expect(JSON.stringify(settings)).not.toContain(token);
    expect((await page("/status")).status).toBe(401);
    expect((await page("/status?token=wrong-token-0123456789")).status).toBe(403);
    expect((await json("/api/status")).status).toBe(401);
    const rows = (await panel.auth.audit.queryAudit({ limit: 5 })).map((a) => [a.action, a.outcome]);
    expect(rows.slice(0, 2)).toEqual([
      ["status-page.rotate-token", "ok"],
      ["status-page.update", "ok"],
    ]);
    expect(JSON.stringify(await panel.auth.audit.queryAudit({ limit: 5 }))).not.toContain(token);
  });

  it("with the token (query or path) and no session: every unit under its Description, in plain words, with uptime; nothing internal", async () => {
    await expect
      .poll(async () => ((await (await json(`/api/status?token=${token}`)).json()) as StatusDocument).services[0]?.uptime["24h"], { timeout: 10_000 })
      .not.toBeNull();
    const res = await json(`/api/status?token=${token}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("private, max-age=10");
    expect(res.headers.get("set-cookie")).toBeNull();
    const text = await res.text();
    const doc = JSON.parse(text) as StatusDocument;
    const names = doc.services.map((s) => s.name);
    expect(names).toContain("vLLM: Kimi K2.5 (TP=8)");
    expect(names).toContain("vLLM: Llama 3.3 70B");
    expect(doc.services.find((s) => s.name === "vLLM: Kimi K2.5 (TP=8)")).toMatchObject({ state: "serving", words: "Serving" });
    expect(doc.services.find((s) => s.name === "vLLM: Llama 3.3 70B")!.words).toMatch(/^Down since \d\d:\d\d UTC$/);
    expect(doc.services.every((s) => s.hosts === undefined)).toBe(true);
    expect(text).not.toContain(HOST);
    expectNothingInternal(text);

    const html = await (await page(`/status/${token}`)).text();
    expect(html).toContain("vLLM: Kimi K2.5 (TP=8)");
    expect(html).toContain('name="viewport"');
    expect(html).not.toContain(HOST);
    expectNothingInternal(html);
  });

  it("incidents come from the alert history, with a plain cause", async () => {
    await expect
      .poll(
        async () =>
          ((await (await json(`/api/status?token=${token}`)).json()) as StatusDocument).services.find((s) => s.name === "vLLM: Llama 3.3 70B")!.incidents
            .length,
        { timeout: 10_000 },
      )
      .toBeGreaterThan(0);
    const doc = (await (await json(`/api/status?token=${token}`)).json()) as StatusDocument;
    const incident = doc.services.find((s) => s.name === "vLLM: Llama 3.3 70B")!.incidents[0]!;
    expect(incident.endMs).toBeNull();
    expect(incident.cause).toMatch(/^[A-Z][^`/=]*\.$/);
  });

  it("is cache-friendly: the same data answers 304 to its ETag", async () => {
    const first = await json(`/api/status?token=${token}`);
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await json(`/api/status?token=${token}`, { "if-none-match": etag });
    expect([200, 304]).toContain(again.status);
  });

  it("is live over SSE while open, and a rotated link ends the stream and stops working", async () => {
    const res = await handleStatusEvents(get(`/api/status/events?token=${token}`), { ...panel.statusHttp, streamIntervalMs: 100 });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const rotated = mutate("statusPage.rotateToken");
    const text = await readSse(res, (t) => t.includes("event: gone"), 5000);
    expect(text).toMatch(/event: status\ndata: \{"generatedAtMs"/);
    expect(text).toContain("event: gone");
    expectNothingInternal(text);
    const next = data<{ token: string }>(await rotated).token;
    expect((await page(`/status?token=${token}`)).status).toBe(403);
    expect((await page(`/status?token=${next}`)).status).toBe(200);
    token = next;
  });

  it("public: no token needed, publicly cacheable; host names only when the admin allows", async () => {
    data(await mutate("statusPage.update", { public: true }));
    const res = await json("/api/status");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toMatch(/^public, max-age=10/);
    data(await mutate("statusPage.update", { showHosts: true, groups: [{ name: "Kimi K2.5 chat", units: [`${HOST}:vllm-kimi-k25.service`] }] }));
    const doc = (await (await json("/api/status")).json()) as StatusDocument;
    expect(doc.services.map((s) => [s.name, s.hosts])).toEqual([["Kimi K2.5 chat", [HOST]]]);
    expect((await mutate("statusPage.update", { groups: [{ name: "x", units: ["not a unit"] }] })).status).toBe(400);
  });

  it("the panel's server lets /status and /status/<token> through without a session (the page checks itself)", async () => {
    const req = (url: string) =>
      ({ method: "GET", url, headers: { host: "127.0.0.1:3000" }, socket: { remoteAddress: "127.0.0.1" } }) as unknown as IncomingMessage;
    expect(await pageRedirect(req(`/status?token=${token}`), panel)).toBeNull();
    expect(await pageRedirect(req(`/status/${token}`), panel)).toBeNull();
    expect(await pageRedirect(req("/statusx"), panel)).toMatchObject({ location: "/login?next=%2Fstatusx" });
    expect(await pageRedirect(req("/status/a/b"), panel)).not.toBeNull();
  });

  it("answers only to the panel's own names (DNS-rebinding guard)", async () => {
    expect((await json("/api/status", { host: "evil.example" })).status).toBe(403);
  });
});

describe("who may see it", () => {
  const env = "env-token-0123456789abcdef";
  it("GPUDECK_STATUS_TOKEN turns it on with that token; a stored token works only while the page is on", async () => {
    expect(checkAccess(DEFAULT_SETTINGS, null, null)).toMatchObject({ ok: false, status: 404 });
    expect(checkAccess(DEFAULT_SETTINGS, env, env)).toEqual({ ok: true });
    expect(checkAccess(DEFAULT_SETTINGS, env, null)).toMatchObject({ ok: false, status: 401 });
    expect(checkAccess(DEFAULT_SETTINGS, env, `${env}x`)).toMatchObject({ ok: false, status: 403 });
    // public only counts when an admin turned the page on
    expect(checkAccess({ ...DEFAULT_SETTINGS, public: true }, env, null)).toMatchObject({ ok: false, status: 401 });
  });
});
