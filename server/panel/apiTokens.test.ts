/**
 * API tokens through the panel's real endpoint: made once, stored hashed, used with
 * `Authorization: Bearer` (no cookie, no Origin), checked like a session (role, unit patterns,
 * the same-action guard), audited as "owner (token name)", at most the owner's rights, refused
 * once expired or revoked (open streams end), never together with a cookie, and rate-limited.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../agent/main";
import { sha256Hex } from "../auth/crypto";
import type { Panel } from "./instance";
import {
  addUser,
  bearerHeaders,
  call,
  decodeSse,
  HOST,
  hostConnected,
  login,
  panelRequest,
  readSse,
  startTestAgent,
  startTestPanel,
  type TestPanel,
} from "./panelTestHarness";

const DAY = 24 * 60 * 60 * 1000;
const EMBED = "vllm-embed-small.service";
let agent: RunningAgent;
let tp: TestPanel;
let panel: Panel;
const cookies: Record<string, string> = {};

beforeAll(async () => {
  agent = await startTestAgent();
  tp = await startTestPanel(agent, { env: { GPUDECK_TOKEN_REQUESTS_PER_MINUTE: "40" }, panel: { streamRecheckMs: 60_000 } });
  panel = tp.panel;
  await addUser(panel, "ada", "admin");
  await addUser(panel, "bea", "admin");
  await addUser(panel, "otto", "operator", ["vllm-embed-*"]);
  await addUser(panel, "vera", "viewer");
  for (const [i, name] of ["ada", "bea", "otto", "vera"].entries())
    cookies[name] = await login(panel, name, undefined, { "x-gpudeck-peer": `10.1.0.${i + 1}` });
  await hostConnected(panel);
}, 30_000);

afterAll(async () => {
  await tp?.close();
  await agent?.close();
});

type Made = { id: number; token: string; name: string; role: string; units: string[]; expiresAt: number };
async function create(who: string, input: Record<string, unknown>): Promise<Made> {
  const r = await call(panel, "tokens.create", { input: { expiresInDays: 30, ...input }, cookie: cookies[who] });
  expect(r.status, r.text).toBe(200);
  return r.json!.result!.data as Made;
}
async function createRefused(who: string, input: Record<string, unknown>): Promise<string> {
  const r = await call(panel, "tokens.create", { input: { expiresInDays: 30, ...input }, cookie: cookies[who] });
  expect(r.status, r.text).toBeGreaterThanOrEqual(400);
  return r.json!.error!.message;
}
const withToken = (token: string, path: string, input?: unknown, method?: string) => call(panel, path, { input, method, headers: bearerHeaders(token) });

describe("making and listing", () => {
  it("answers the token once, gdk_ + 32 bytes base64url, and stores only its SHA-256", async () => {
    const t = await create("otto", { name: "ci deploy", role: "operator" });
    expect(t.token).toMatch(/^gdk_[A-Za-z0-9_-]{43}$/);
    expect(t.units).toEqual(["vllm-embed-*"]); // an operator's own patterns by default
    const { db } = await panel.services.store.get();
    const row = await db.selectFrom("api_tokens").selectAll().where("id", "=", t.id).executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(sha256Hex(t.token));
    expect(JSON.stringify(row)).not.toContain(t.token.slice(4));
    const list = await call(panel, "tokens.list", { method: "GET", cookie: cookies.otto });
    expect(list.status).toBe(200);
    expect(list.text).toContain("ci deploy");
    expect(list.text).not.toContain(t.token.slice(4));
    expect(list.text).not.toContain(row.token_hash);
  });

  it("gives a personal token at most its owner's rights", async () => {
    expect(await createRefused("otto", { name: "x", role: "admin" })).toMatch(/at most your own rights: you are operator/);
    expect(await createRefused("otto", { name: "y", role: "operator", units: ["vllm-*"] })).toMatch(/reaches beyond your own/);
    expect(await createRefused("vera", { name: "z", role: "operator" })).toMatch(/at most your own rights/);
    expect(await createRefused("otto", { name: "s", role: "viewer", kind: "service" })).toMatch(/Only admins make service tokens/);
    const narrower = await create("otto", { name: "narrow", role: "operator", units: ["vllm-embed-s*"] });
    expect(narrower.units).toEqual(["vllm-embed-s*"]);
  });

  it("is refused when asked for with a token (a leaked token cannot mint another)", async () => {
    const t = await create("ada", { name: "minter", role: "admin" });
    const r = await withToken(t.token, "tokens.create", { name: "child", role: "viewer", expiresInDays: 1 });
    expect(r.status).toBe(403);
    expect(r.json?.error?.message).toMatch(/from a signed-in browser/);
  });
});

describe("calling with a token", () => {
  it("works without cookie or Origin and says who it is", async () => {
    const t = await create("vera", { name: "dash", role: "viewer" });
    const me = await withToken(t.token, "session.me", undefined, "GET");
    expect(me.status, me.text).toBe(200);
    expect(me.json?.result?.data).toMatchObject({ user: { name: "vera", role: "viewer", unitPatterns: [], via: "token" } });
    const units = await withToken(t.token, "units.list", undefined, "GET");
    expect(units.status).toBe(200);
    const restart = await withToken(t.token, "units.restart", { host: HOST, name: EMBED, reason: "viewer try" });
    expect(restart.status).toBe(403);
  });

  it("acts within its patterns, audited as 'owner (token name)', with the same-action guard", async () => {
    const t = await create("otto", { name: "ci-restart", role: "operator" });
    const outside = await withToken(t.token, "units.restart", { host: HOST, name: "vllm-kimi-k25.service", reason: "outside" });
    expect(outside.status, outside.text).toBe(403);
    const first = await withToken(t.token, "units.restart", { host: HOST, name: EMBED, reason: "deploy 42" });
    expect(first.status, first.text).toBe(200);
    const again = await withToken(t.token, "units.restart", { host: HOST, name: EMBED, reason: "deploy 42 again" });
    expect(again.status).toBe(409);
    expect(again.json?.error?.message).toMatch(/^Confirmation required: otto \(ci-restart\) restarted/);
    const audit = await call(panel, "audit.list", { method: "GET", input: { action: "restart", limit: 5 }, cookie: cookies.ada });
    const rows = (audit.json!.result!.data as { rows: { user: string; reason: string; outcome: string }[] }).rows;
    expect(rows.find((r) => r.reason === "deploy 42")).toMatchObject({ user: "otto (ci-restart)" });
    expect(rows.find((r) => r.user === "otto (ci-restart)" && r.outcome === "refused")).toBeTruthy();
  });

  it("is refused together with a session cookie, and with a malformed or unknown token", async () => {
    const t = await create("vera", { name: "both", role: "viewer" });
    const both = await call(panel, "session.me", { method: "GET", cookie: cookies.vera, headers: bearerHeaders(t.token) });
    expect(both.status).toBe(400);
    expect(both.json?.error?.message).toMatch(/either an API token .* or a session cookie, not both/);
    const bad = await withToken("gdk_nope", "units.list", undefined, "GET");
    expect(bad.status).toBe(401);
    expect(bad.json?.error?.message).toMatch(/not a gpudeck API token/);
    const unknown = await withToken(`gdk_${"A".repeat(43)}`, "units.list", undefined, "GET");
    expect(unknown.status).toBe(401);
    expect(unknown.json?.error?.message).toMatch(/unknown API token/);
  });

  it("is capped by its owner's rights now: an admin demoted to viewer has a viewer token", async () => {
    const t = await create("bea", { name: "ops", role: "admin" });
    expect((await withToken(t.token, "users.list", undefined, "GET")).status).toBe(200);
    await panel.auth.users.updateUser("bea", { role: "viewer" });
    const after = await withToken(t.token, "session.me", undefined, "GET");
    expect(after.json?.result?.data).toMatchObject({ user: { name: "bea", role: "viewer" } });
    expect((await withToken(t.token, "users.list", undefined, "GET")).status).toBe(403);
    await panel.auth.users.updateUser("bea", { role: "admin" });
  });

  it("is refused once expired", async () => {
    const t = await create("vera", { name: "short", role: "viewer", expiresInDays: 1 });
    expect((await withToken(t.token, "units.list", undefined, "GET")).status).toBe(200);
    tp.clock.offsetMs = DAY + 1000;
    try {
      const r = await withToken(t.token, "units.list", undefined, "GET");
      expect(r.status).toBe(401);
      expect(r.json?.error?.message).toMatch(/expired/);
    } finally {
      tp.clock.offsetMs = 0;
    }
  });

  it("is refused once revoked, and its open stream ends at once", async () => {
    const t = await create("otto", { name: "watcher", role: "operator" });
    const res = await panel.handle(panelRequest("events.watch", { sse: true, input: { watch: "host", host: HOST }, headers: bearerHeaders(t.token) }));
    expect(res.status).toBe(200);
    const reading = readSse(res, (text) => /event: serialized-error/.test(text), 5000);
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    const revoked = await call(panel, "tokens.revoke", { input: { id: t.id }, cookie: cookies.otto });
    expect(revoked.status, revoked.text).toBe(200);
    const text = decodeSse(await reading);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(text).toMatch(/revoked or expired/);
    const r = await withToken(t.token, "units.list", undefined, "GET");
    expect(r.status).toBe(401);
    expect(r.json?.error?.message).toMatch(/revoked/);
  });

  it("cannot be revoked by someone else (but by an admin)", async () => {
    const t = await create("otto", { name: "mine", role: "operator" });
    const other = await call(panel, "tokens.revoke", { input: { id: t.id }, cookie: cookies.vera });
    expect(other.status).toBe(404);
    const all = await call(panel, "tokens.list", { method: "GET", input: { all: true }, cookie: cookies.ada });
    expect(all.text).toContain('"mine"');
    expect((await call(panel, "tokens.revoke", { input: { id: t.id }, cookie: cookies.ada })).status).toBe(200);
  });

  it("is rate-limited per token (GPUDECK_TOKEN_REQUESTS_PER_MINUTE)", async () => {
    const t = await create("vera", { name: "busy", role: "viewer" });
    const statuses: number[] = [];
    for (let i = 0; i < 42; i++) statuses.push((await withToken(t.token, "session.me", undefined, "GET")).status);
    expect(statuses.slice(0, 40).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(40)).toEqual([429, 429]);
    const r = await withToken(t.token, "session.me", undefined, "GET");
    expect(r.headers.get("retry-after")).toMatch(/^\d+$/);
  });
});
