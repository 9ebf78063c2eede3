/**
 * Sessions as the panel wires them, through its real API endpoint: sign-in and its cookie,
 * idle and absolute expiry, sign-out, a password change ending the other sessions (and their
 * open live streams), login rate limits, first-run setup and trusted-proxy identity.
 * (server/auth has the module's own unit tests; these test the wiring.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../agent/main";
import type { Panel } from "./instance";
import {
  addUser,
  call,
  cookiePair,
  HOST,
  login,
  openEventStream,
  panelRequest,
  PASSWORD,
  startTestAgent,
  startTestPanel,
  type TestPanel,
} from "./panelTestHarness";

const MINUTE = 60_000;
/** the error event that ends a stream, with its data line */
const ENDED = /event: serialized-error\ndata: [^\n]*\n/;
let agent: RunningAgent;
let tp: TestPanel;
let panel: Panel;

beforeAll(async () => {
  agent = await startTestAgent();
  tp = await startTestPanel(agent, {
    env: { GPUDECK_SESSION_IDLE_MINUTES: "10", GPUDECK_SESSION_MAX_HOURS: "1" },
    panel: { streamRecheckMs: 200 },
  });
  panel = tp.panel;
  for (const [name, role] of [
    ["ada", "admin"],
    ["vera", "viewer"],
    ["paul", "operator"],
    ["rita", "viewer"],
    ["sam", "viewer"],
  ] as const) {
    await addUser(panel, name, role, role === "operator" ? ["vllm-*"] : []);
  }
}, 30_000);

afterAll(async () => {
  await tp?.close();
  await agent?.close();
});

type Me = { user: { name: string; role: string; via: string } | null; setupPending: boolean; signedOutReason: string | null };
async function me(cookie: string | null, headers: Record<string, string | null> = {}): Promise<{ me: Me; setCookie: string[] }> {
  const r = await call(panel, "session.me", { method: "GET", cookie, headers });
  expect(r.status, r.text).toBe(200);
  return { me: r.json!.result!.data as Me, setCookie: r.headers.getSetCookie() };
}

describe("sign-in", () => {
  it("sets an httpOnly, SameSite=Strict session cookie and session.me knows the user", async () => {
    const r = await call(panel, "session.login", { input: { username: "Vera", password: PASSWORD } });
    expect(r.status, r.text).toBe(200);
    const set = r.headers.getSetCookie().find((c) => c.startsWith("gpudeck_session="))!;
    expect(set).toMatch(/; Path=\//);
    expect(set).toMatch(/; HttpOnly/);
    expect(set).toMatch(/; SameSite=Strict/);
    expect(set).toMatch(/; Max-Age=(3599|3600);/); // the absolute lifetime left (1 h here)
    expect(set).not.toMatch(/Secure/); // plain http here; GPUDECK_PUBLIC_URL=https://… turns it on
    const { me: m } = await me(cookiePair(r.headers));
    expect(m.user).toMatchObject({ name: "vera", role: "viewer", via: "session" });
    const row = (await panel.auth.audit.queryAudit({ action: "login", user: "vera", limit: 1 }))[0]!;
    expect(row).toMatchObject({ outcome: "ok", sourceAddr: "10.20.30.40" });
  });

  it("signed out: session.me says so without an error, and nothing else answers", async () => {
    const { me: m } = await me(null);
    expect(m.user).toBeNull();
    expect(m.setupPending).toBe(false);
    const list = await call(panel, "units.list", { method: "GET" });
    expect(list.status).toBe(401);
    const watch = await panel.handle(panelRequest("events.watch", { sse: true, input: { watch: "host", host: HOST } }));
    expect(await watch.text()).toMatch(/UNAUTHORIZED/);
  });

  it("a wrong password is refused with one generic message and audited", async () => {
    const r = await call(panel, "session.login", { input: { username: "rita", password: "not her password" } });
    expect(r.status).toBe(401);
    expect(r.json?.error?.message).toBe("Invalid username or password.");
    expect((await panel.auth.audit.queryAudit({ action: "login", user: "rita", limit: 1 }))[0]).toMatchObject({ outcome: "refused", reason: "wrong-password" });
  });
});

/** Something the person does (a mutation; refused for a viewer, but signed in): renews the idle timeout. */
async function act(cookie: string): Promise<void> {
  const r = await call(panel, "units.start", { input: { host: HOST, name: "vllm-embed-small.service" }, cookie });
  expect(r.status, r.text).toBe(403);
}

describe("expiry", () => {
  it("idle timeout: the session ends, the cookie is cleared, the reason is given", async () => {
    const c = await login(panel, "rita");
    tp.clock.offsetMs = 9 * MINUTE;
    await act(c); // still inside the idle window: this use renews it
    tp.clock.offsetMs = 18 * MINUTE;
    await act(c);
    expect((await me(c)).me.user?.name).toBe("rita");
    tp.clock.offsetMs = 29 * MINUTE; // 11 min without a request
    const after = await me(c);
    expect(after.me.user).toBeNull();
    expect(after.me.signedOutReason).toMatch(/timed out/);
    expect(after.setCookie.join("\n")).toMatch(/gpudeck_session=; Max-Age=0/);
    tp.clock.offsetMs = 0;
    expect((await me(c)).me.user).toBeNull(); // gone for good, not revived by the clock
  });

  it("absolute lifetime: even a session in constant use ends", async () => {
    const c = await login(panel, "rita");
    tp.clock.offsetMs = 0;
    for (let t = 5; t < 60; t += 5) {
      tp.clock.offsetMs = t * MINUTE;
      await act(c);
      expect((await me(c)).me.user?.name, `at ${t} min`).toBe("rita");
    }
    tp.clock.offsetMs = 61 * MINUTE;
    const after = await me(c);
    expect(after.me.user).toBeNull();
    expect(after.me.signedOutReason).toMatch(/expired/);
    tp.clock.offsetMs = 0;
  });
});

describe("idle timeout with a tab left open", () => {
  it("neither an open live stream nor the UI's polling keeps the session alive", async () => {
    const c = await login(panel, "vera");
    const stream = await openEventStream(panel, c);
    await stream.until(/"kind":"host-snapshot"/);
    // 12 minutes in 2-minute steps: the stream re-checks its session, the UI polls session.me
    for (let t = 2; t <= 12; t += 2) {
      tp.clock.offsetMs = t * MINUTE;
      await new Promise((r) => setTimeout(r, 450)); // two stream re-checks
      if (t < 10) expect((await me(c)).me.user?.name, `at ${t} min`).toBe("vera");
    }
    const text = await stream.until(ENDED);
    await stream.close();
    expect(text).toMatch(/session has ended|sign in again/);
    // the stream's re-check found it timed out and deleted it
    expect((await me(c)).me.user).toBeNull();
    tp.clock.offsetMs = 0;
  });

  it("a person's action still renews it while the stream is open", async () => {
    const c = await login(panel, "vera");
    const stream = await openEventStream(panel, c);
    await stream.until(/"kind":"host-snapshot"/);
    for (let t = 3; t <= 15; t += 3) {
      tp.clock.offsetMs = t * MINUTE;
      await act(c);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect((await me(c)).me.user?.name).toBe("vera");
    await stream.close();
    tp.clock.offsetMs = 0;
  });
});

describe("sign-out", () => {
  it("ends the session, clears the cookie, ends its live stream, and is audited", async () => {
    const c = await login(panel, "sam");
    const stream = await openEventStream(panel, c);
    await stream.until(/"kind":"host-snapshot"/);
    const out = await call(panel, "session.logout", { cookie: c });
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie().join("\n")).toMatch(/gpudeck_session=; Max-Age=0/);
    expect((await me(c)).me.user).toBeNull();
    const text = await stream.until(ENDED);
    expect(text).toMatch(/Your session has ended/);
    expect(text).toMatch(/UNAUTHORIZED/);
    expect((await panel.auth.audit.queryAudit({ action: "logout", user: "sam", limit: 1 }))[0]).toMatchObject({ outcome: "ok" });
  });

  it("sign-out without a session just clears the cookie", async () => {
    const out = await call(panel, "session.logout", { cookie: "gpudeck_session=" + "x".repeat(43) });
    expect(out.status).toBe(200);
    expect(out.json?.result?.data).toEqual({ ended: false, endSessionUrl: null });
  });
});

describe("password change", () => {
  it("ends every other session and its live streams; this browser gets a fresh session", async () => {
    const here = await login(panel, "paul");
    const other = await login(panel, "paul", PASSWORD, { "x-gpudeck-peer": "10.9.9.9" });
    const otherStream = await openEventStream(panel, other);
    await otherStream.until(/"kind":"host-snapshot"/);
    const NEW = "a completely new passphrase";
    const r = await call(panel, "session.changePassword", { input: { currentPassword: PASSWORD, newPassword: NEW }, cookie: here });
    expect(r.status, r.text).toBe(200);
    const fresh = cookiePair(r.headers);
    expect(fresh).not.toBe(here);
    expect((await me(fresh)).me.user?.name).toBe("paul");
    expect((await me(here)).me.user).toBeNull();
    expect((await me(other)).me.user).toBeNull();
    expect(await otherStream.until(ENDED)).toMatch(/Your session has ended/);
    // the new password works, the old one no longer does
    expect((await call(panel, "session.login", { input: { username: "paul", password: PASSWORD } })).status).toBe(401);
    expect((await call(panel, "session.login", { input: { username: "paul", password: NEW } })).status).toBe(200);
    expect((await panel.auth.audit.queryAudit({ action: "user.passwd", user: "paul", limit: 1 }))[0]).toMatchObject({ outcome: "ok" });
  });

  it("a wrong current password is refused clearly and leaves the session alone", async () => {
    const c = await login(panel, "vera");
    const r = await call(panel, "session.changePassword", {
      input: { currentPassword: "wrong wrong wrong", newPassword: "another new passphrase" },
      cookie: c,
    });
    expect(r.status).toBe(400);
    expect(r.json?.error?.message).toMatch(/current password/i);
    expect((await me(c)).me.user?.name).toBe("vera");
  });

  it("a weak new password is refused with the rule", async () => {
    const c = await login(panel, "vera");
    const r = await call(panel, "session.changePassword", { input: { currentPassword: PASSWORD, newPassword: "short" }, cookie: c });
    expect(r.status).toBe(400);
    expect(r.json?.error?.message).toMatch(/12/);
  });

  it("a user disabled from the CLI loses open streams at the next check", async () => {
    const c = await login(panel, "rita");
    const stream = await openEventStream(panel, c);
    await stream.until(/"kind":"host-snapshot"/);
    await panel.auth.users.setDisabled("rita", true); // what `npm run user -- disable rita` does to the database
    expect(await stream.until(ENDED, 3000)).toMatch(/Your session has ended/);
    await panel.auth.users.setDisabled("rita", false);
  });
});

describe("login rate limits through session.login", () => {
  it("five failures for a user from one address: the sixth is refused even with the right password, with a retry time", async () => {
    const from = { "x-gpudeck-peer": "10.1.1.1" };
    for (let i = 0; i < 5; i++) {
      const r = await call(panel, "session.login", { input: { username: "ada", password: `wrong ${i} wrong wrong` }, headers: from });
      expect(r.status).toBe(401);
    }
    const limited = await call(panel, "session.login", { input: { username: "ada", password: PASSWORD }, headers: from });
    expect(limited.status).toBe(429);
    expect(limited.json?.error?.message).toMatch(/^Too many failed sign-ins for this account; try again in \d+ min\.$/);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(60);
    expect((await panel.auth.audit.queryAudit({ action: "login", user: "ada", limit: 1 }))[0]).toMatchObject({
      outcome: "refused",
      reason: "rate limited (user+address)",
    });
    // another address is not punished for it
    const elsewhere = await call(panel, "session.login", { input: { username: "ada", password: PASSWORD }, headers: { "x-gpudeck-peer": "10.1.1.2" } });
    expect(elsewhere.status).toBe(200);
    // and a spoofed X-Forwarded-For does not get around it
    const spoofed = await call(panel, "session.login", { input: { username: "ada", password: PASSWORD }, headers: { ...from, "x-forwarded-for": "10.7.7.7" } });
    expect(spoofed.status).toBe(429);
  });

  it("twenty failures from one address across names: the address is refused", async () => {
    const from = { "x-gpudeck-peer": "10.2.2.2" };
    for (let i = 0; i < 20; i++) {
      await call(panel, "session.login", { input: { username: `guess${i}`, password: "password guess 1" }, headers: from });
    }
    const r = await call(panel, "session.login", { input: { username: "vera", password: PASSWORD }, headers: from });
    expect(r.status).toBe(429);
    expect(r.json?.error?.message).toMatch(/from this address/);
  });
});

describe("first-run setup", () => {
  it("no admin: the setup link's token creates the first admin once; a wrong token is refused", async () => {
    const fresh = await startTestPanel(agent, { panel: { background: false } });
    try {
      const p = fresh.panel;
      const meFresh = await call(p, "session.me", { method: "GET" });
      expect((meFresh.json?.result?.data as Me).setupPending).toBe(true);
      const setup = (await p.auth.users.ensureSetupToken())!;
      const bad = await call(p, "setup.complete", { input: { token: "x".repeat(43), username: "root", password: PASSWORD } });
      expect(bad.status).toBe(403);
      expect(bad.json?.error?.message).toMatch(/setup link is invalid/);
      const ok = await call(p, "setup.complete", { input: { token: setup.token, username: "root", password: PASSWORD } });
      expect(ok.status, ok.text).toBe(200);
      const c = cookiePair(ok.headers);
      const after = await call(p, "session.me", { method: "GET", cookie: c });
      expect((after.json?.result?.data as Me).user).toMatchObject({ name: "root", role: "admin" });
      const again = await call(p, "setup.complete", { input: { token: setup.token, username: "root2", password: PASSWORD } });
      expect(again.status).toBe(403);
      expect(again.json?.error?.message).toMatch(/setup is already done/);
      // once an admin exists, a setup attempt leaves no audit row (anyone could flood the log with them)
      expect((await p.auth.audit.queryAudit({ action: "setup", limit: 5 })).map((r) => r.outcome)).toEqual(["ok", "refused"]);
    } finally {
      await fresh.close();
    }
  });
});

describe("trusted reverse proxy", () => {
  it("believes the identity header only from a configured proxy address (the TCP peer, never X-Forwarded-For)", async () => {
    const proxied = await startTestPanel(agent, {
      env: { GPUDECK_PROXY_AUTH_HEADER: "x-forwarded-user", GPUDECK_TRUSTED_PROXIES: "10.0.0.5" },
      panel: { background: false },
    });
    try {
      const p = proxied.panel;
      await addUser(p, "ada", "admin");
      const who = async (headers: Record<string, string>) =>
        ((await call(p, "session.me", { method: "GET", headers })).json?.result?.data as Me).user?.name ?? null;
      expect(await who({ "x-gpudeck-peer": "10.0.0.5", "x-forwarded-user": "ada" })).toBe("ada");
      expect(await who({ "x-gpudeck-peer": "10.20.30.40", "x-forwarded-user": "ada" })).toBeNull();
      expect(await who({ "x-gpudeck-peer": "10.20.30.40", "x-forwarded-for": "10.0.0.5", "x-forwarded-user": "ada" })).toBeNull();
      expect(await who({ "x-gpudeck-peer": "10.0.0.5", "x-forwarded-user": "mallory" })).toBeNull(); // unknown, no default role
    } finally {
      await proxied.close();
    }
  });
});
