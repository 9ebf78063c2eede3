import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { testDatabasesForFile } from "../store/testing/databases";
import { createPanelAuth } from "./panelAuth";
import { FakeClock, HOUR, MINUTE } from "./testHelpers";

const dbs = testDatabasesForFile("sign-in, sessions and setup");
type Auth = Awaited<ReturnType<typeof createPanelAuth>>;

const PW = "correct horse battery staple";
const meta = { sourceAddr: "10.0.0.5", userAgent: "vitest" };

function cookieHeaderFrom(setCookie: string): string {
  return setCookie.split(";")[0]!;
}

describe.each(dbs.dialects)("PanelAuth on %s", (dialect) => {
  let fake: FakeClock;
  let auth: Auth;
  // the sign-in limiter counts in the process's time (rate-limiter-flexible's Date.now): both move together
  const tick = (ms: number) => {
    fake.advance(ms);
    vi.setSystemTime(fake.now);
  };

  beforeEach(async () => {
    fake = new FakeClock();
    vi.useFakeTimers({ toFake: ["Date"], now: fake.now });
    const db = await dbs.fresh(dialect);
    auth = await createPanelAuth({ dataDir: db.dataDir, databaseUrl: db.databaseUrl, clock: fake.clock });
  });
  afterEach(async () => {
    vi.useRealTimers();
    await auth.close();
  });

  async function setupAdmin(): Promise<void> {
    const { token } = (await auth.users.ensureSetupToken())!;
    await auth.completeSetup({ token, username: "root", password: PW, secure: false, ...meta });
  }

  it("first run: setup link creates the admin, signs them in, and is audited", async () => {
    const issued = (await auth.users.ensureSetupToken())!;
    const done = await auth.completeSetup({ token: issued.token, username: "root", password: PW, secure: true, ...meta });
    expect(done.user.role).toBe("admin");
    expect(done.setCookie).toMatch(/^__Host-gpudeck_session=[A-Za-z0-9_-]{43}; Max-Age=604800; Path=\/; HttpOnly; SameSite=Strict; Secure$/);
    const who = await auth.authenticate({ remoteAddress: "10.0.0.5", headers: { cookie: cookieHeaderFrom(done.setCookie) }, secure: true });
    expect(who).toMatchObject({ ok: true, via: "session", principal: { username: "root", role: "admin" } });
    await expect(auth.completeSetup({ token: issued.token, username: "evil", password: PW, secure: true, ...meta })).rejects.toThrow(/setup is already done/);
    // once an admin exists, setup attempts leave no audit row
    expect((await auth.audit.queryAudit({ action: "setup" })).map((r) => r.outcome)).toEqual(["ok"]);
  });

  it("login → authenticated requests → logout → refused, each audited", async () => {
    await setupAdmin();
    await auth.users.createUser({ username: "alice", password: PW, role: "operator", unitPatterns: ["vllm-a-*"] });
    const login = await auth.login({ username: "alice", password: PW, secure: false, ...meta });
    if (!login.ok) throw new Error(login.message);
    const headers = new Headers({ cookie: `theme=dark; ${cookieHeaderFrom(login.setCookie)}` });
    const who = await auth.authenticate({ remoteAddress: "10.0.0.5", headers, secure: false });
    expect(who).toMatchObject({ ok: true, principal: { username: "alice", role: "operator", unitPatterns: ["vllm-a-*"], via: "session" } });
    if (who.ok) {
      expect(auth.can(who.principal, "restart", "vllm-a-1.service").allowed).toBe(true);
      expect(auth.can(who.principal, "restart", "vllm-b-1.service").allowed).toBe(false);
      expect(auth.can(who.principal, "kill", "vllm-a-1.service").allowed).toBe(false);
    }
    const out = await auth.logout({ sessionId: login.sessionId, secure: false, ...meta });
    expect(out.ended).toBe(true);
    expect(out.setCookie).toMatch(/^gpudeck_session=; Max-Age=0/);
    const after = await auth.authenticate({ remoteAddress: "10.0.0.5", headers, secure: false });
    expect(after).toMatchObject({ ok: false, reason: "unknown", clearCookie: true });
    expect((await auth.audit.queryAudit({ user: "alice" })).map((r) => `${r.action}:${r.outcome}`)).toEqual(["logout:ok", "login:ok"]);
  });

  it("a request without a cookie is refused without asking to clear one", async () => {
    expect(await auth.authenticate({ remoteAddress: "10.0.0.5", headers: {}, secure: false })).toEqual({
      ok: false,
      reason: "missing",
      message: "sign in first",
      clearCookie: false,
    });
    expect(await auth.authenticate({ remoteAddress: "10.0.0.5", headers: { cookie: "gpudeck_session=forged" }, secure: false })).toMatchObject({
      ok: false,
      clearCookie: true,
    });
  });

  it("expired sessions are refused with a reason", async () => {
    await setupAdmin();
    const login = await auth.login({ username: "root", password: PW, secure: false, ...meta });
    if (!login.ok) throw new Error("login failed");
    tick(13 * HOUR);
    expect(await auth.authenticate({ remoteAddress: "10.0.0.5", headers: { cookie: cookieHeaderFrom(login.setCookie) }, secure: false })).toMatchObject({
      ok: false,
      reason: "idle-timeout",
      message: "your session timed out; sign in again",
    });
  });

  it("failed logins say nothing about the user, are audited, and unknown names are not recorded", async () => {
    await setupAdmin();
    const wrong = await auth.login({ username: "root", password: "nope nope nope", secure: false, ...meta });
    const unknown = await auth.login({ username: "my secret password", password: "x", secure: false, ...meta });
    expect(wrong).toEqual({ ok: false, reason: "invalid-credentials", message: "invalid username or password" });
    expect(unknown).toEqual(wrong);
    const refused = await auth.audit.queryAudit({ action: "login", outcome: "refused" });
    expect(refused.map((r) => [r.user, r.reason])).toEqual([
      [null, "unknown-user"],
      ["root", "wrong-password"],
    ]);
    expect(JSON.stringify(await auth.audit.queryAudit())).not.toContain("my secret password");
  });

  it("rate-limits logins per user and address, even with the right password", async () => {
    await setupAdmin();
    for (let i = 0; i < 5; i++) expect((await auth.login({ username: "root", password: `wrong guess ${i}!`, secure: false, ...meta })).ok).toBe(false);
    const blocked = await auth.login({ username: "root", password: PW, secure: false, ...meta });
    // a flood of blocked attempts is recorded once a minute, not once each
    for (let i = 0; i < 10; i++) await auth.login({ username: "root", password: PW, secure: false, ...meta });
    expect(blocked).toMatchObject({ ok: false, reason: "rate-limited", retryAfterMs: 15 * MINUTE, message: expect.stringMatching(/try again in 15 min/) });
    expect((await auth.login({ username: "root", password: PW, secure: false, ...meta, sourceAddr: "10.0.0.6" })).ok).toBe(true);
    tick(15 * MINUTE);
    expect((await auth.login({ username: "root", password: PW, secure: false, ...meta })).ok).toBe(true);
    const refusals = await auth.audit.queryAudit({ action: "login", outcome: "refused" });
    expect(refusals.map((r) => r.reason)).toEqual(["rate limited (user+address)", ...Array(5).fill("wrong-password")]);
  });

  it("a disabled user cannot log in, even with the right password", async () => {
    await setupAdmin();
    await auth.users.createUser({ username: "alice", password: PW, role: "viewer" });
    const s = await auth.login({ username: "alice", password: PW, secure: false, ...meta });
    await auth.users.setDisabled("alice", true);
    expect(await auth.login({ username: "alice", password: PW, secure: false, ...meta })).toMatchObject({ ok: false, reason: "invalid-credentials" });
    if (s.ok) expect((await auth.authenticate({ remoteAddress: null, headers: { cookie: cookieHeaderFrom(s.setCookie) }, secure: false })).ok).toBe(false);
  });

  it("changing one's password ends the other sessions and hands this browser a fresh one", async () => {
    await setupAdmin();
    await auth.users.createUser({ username: "alice", password: PW, role: "viewer" });
    const laptop = await auth.login({ username: "alice", password: PW, secure: false, ...meta });
    const phone = await auth.login({ username: "alice", password: PW, secure: false, ...meta });
    if (!laptop.ok || !phone.ok) throw new Error("login failed");
    tick(MINUTE);
    await expect(
      auth.changeOwnPassword({ userId: laptop.user.id, currentPassword: "not it at all", newPassword: "new long passphrase", secure: false, ...meta }),
    ).rejects.toThrow(/current password/);
    const changed = await auth.changeOwnPassword({ userId: laptop.user.id, currentPassword: PW, newPassword: "new long passphrase", secure: false, ...meta });
    const check = async (cookie: string) =>
      (await auth.authenticate({ remoteAddress: "10.0.0.5", headers: { cookie: cookieHeaderFrom(cookie) }, secure: false })).ok;
    expect(await check(laptop.setCookie)).toBe(false);
    expect(await check(phone.setCookie)).toBe(false);
    expect(await check(changed.setCookie)).toBe(true);
    expect((await auth.audit.queryAudit({ action: "user.passwd" })).map((r) => r.outcome)).toEqual(["ok", "refused"]);
  });

  it("unknown users take about as long to refuse as wrong passwords", async () => {
    await setupAdmin();
    const time = async (username: string): Promise<number> => {
      const samples: number[] = [];
      for (let i = 0; i < 3; i++) {
        const t = performance.now();
        await auth.login({ username, password: "wrong password here", secure: false, sourceAddr: `10.9.0.${samples.length}${username.length}` });
        samples.push(performance.now() - t);
      }
      return samples.sort((a, b) => a - b)[1]!;
    };
    await time("nobody"); // warm the dummy hash
    const unknown = await time("nobody-else");
    const wrong = await time("root");
    expect(unknown).toBeGreaterThan(wrong * 0.4);
  });
});

describe.each(dbs.dialects)("PanelAuth in trusted-proxy mode on %s", (dialect) => {
  let auth: Auth;

  beforeEach(async () => {
    const db = await dbs.fresh(dialect);
    auth = await createPanelAuth({
      dataDir: db.dataDir,
      databaseUrl: db.databaseUrl,
      proxy: { enabled: true, header: "x-auth-request-user", trustedProxies: ["127.0.0.1"], defaultRole: "viewer" },
    });
    await auth.users.createUser({ username: "root", password: PW, role: "admin" });
  });
  afterEach(async () => {
    await auth.close();
  });

  it("takes the identity from the trusted proxy", async () => {
    expect(await auth.authenticate({ remoteAddress: "127.0.0.1", headers: { "x-auth-request-user": "root" }, secure: false })).toMatchObject({
      ok: true,
      via: "proxy",
      principal: { username: "root", role: "admin", via: "proxy" },
    });
    expect(await auth.authenticate({ remoteAddress: "127.0.0.1", headers: { "x-auth-request-user": "someone" }, secure: false })).toMatchObject({
      ok: true,
      principal: { username: "someone", role: "viewer", userId: null },
    });
  });

  it("ignores and audits the header from anyone else, falling back to the session", async () => {
    const r = await auth.authenticate({ remoteAddress: "203.0.113.9", headers: { "x-auth-request-user": "root" }, secure: false });
    expect(r).toMatchObject({ ok: false, reason: "missing" });
    expect((await auth.audit.queryAudit({ action: "proxy-login" }))[0]).toMatchObject({
      outcome: "refused",
      sourceAddr: "203.0.113.9",
      reason: expect.stringMatching(/untrusted/),
    });
    for (let i = 0; i < 20; i++) await auth.authenticate({ remoteAddress: "203.0.113.9", headers: { "x-auth-request-user": "root" }, secure: false });
    expect(await auth.audit.queryAudit({ action: "proxy-login" })).toHaveLength(1);
    const login = await auth.login({ username: "root", password: PW, secure: false, sourceAddr: "203.0.113.9" });
    if (!login.ok) throw new Error("login failed");
    const withCookie = await auth.authenticate({
      remoteAddress: "203.0.113.9",
      headers: { "x-auth-request-user": "someone-else", cookie: cookieHeaderFrom(login.setCookie) },
      secure: false,
    });
    expect(withCookie).toMatchObject({ ok: true, via: "session", principal: { username: "root" } });
  });
});
