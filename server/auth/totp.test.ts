import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { testDatabasesForFile } from "../store/testing/databases";
import { createPanelAuth } from "./panelAuth";
import { FakeClock, MINUTE } from "./testHelpers";
import { codeAt, codeStep, normalizeRecoveryCode, TOTP_STEP_MS, totpSecretContext } from "./totp";
import { completeTwoFactorLogin } from "./twoFactorLogin";

const dbs = testDatabasesForFile("two-factor sign-in");
type Auth = Awaited<ReturnType<typeof createPanelAuth>>;
const PW = "correct horse battery staple";
const meta = { sourceAddr: "10.0.0.9", userAgent: "vitest" };

describe("TOTP codes", () => {
  const secret = "JBSWY3DPEHPK3PXP";
  const t0 = Date.UTC(2025, 0, 15, 12, 0, 0);
  it("accepts the current step and one step either side, nothing further", () => {
    const step = Math.floor(t0 / TOTP_STEP_MS);
    expect(codeStep(secret, codeAt(secret, t0), t0)).toBe(step);
    expect(codeStep(secret, codeAt(secret, t0 - TOTP_STEP_MS), t0)).toBe(step - 1);
    expect(codeStep(secret, codeAt(secret, t0 + TOTP_STEP_MS), t0)).toBe(step + 1);
    expect(codeStep(secret, codeAt(secret, t0 - 2 * TOTP_STEP_MS), t0)).toBeNull();
    expect(codeStep(secret, codeAt(secret, t0 + 2 * TOTP_STEP_MS), t0)).toBeNull();
    expect(codeStep(secret, "12345", t0)).toBeNull();
    expect(codeStep(secret, "abcdef", t0)).toBeNull();
  });
  it("reads recovery codes typed loosely (case, dashes, o/0, l/1)", () => {
    expect(normalizeRecoveryCode(" AB1O0-xyzl2 ")).toBe("ab100xyz12");
  });
});

describe.each(dbs.dialects)("two-factor sign-in on %s", (dialect) => {
  let fake: FakeClock;
  let auth: Auth;
  let userId: number;
  let secret: string;
  let recoveryCodes: string[];
  const tick = (ms: number) => {
    fake.advance(ms);
    vi.setSystemTime(fake.now);
  };

  beforeEach(async () => {
    fake = new FakeClock();
    vi.useFakeTimers({ toFake: ["Date"], now: fake.now });
    const db = await dbs.fresh(dialect);
    auth = await createPanelAuth({ dataDir: db.dataDir, databaseUrl: db.databaseUrl, clock: fake.clock });
    userId = (await auth.users.createUser({ username: "alice", password: PW, role: "admin" })).id;
    ({ secret } = await auth.twoFactor.begin(userId, "alice"));
    expect(await auth.twoFactor.status(userId)).toMatchObject({ enabled: false, pending: true });
    // a pending set-up is not asked for at sign-in
    expect((await auth.login({ username: "alice", password: PW, secure: false, ...meta })).ok).toBe(true);
    await expect(auth.twoFactor.confirm(userId, "000000")).rejects.toThrow(/not right/);
    ({ recoveryCodes } = await auth.twoFactor.confirm(userId, codeAt(secret, fake.now)));
    tick(TOTP_STEP_MS); // the enrolment's code is used
  });
  afterEach(async () => {
    vi.useRealTimers();
    await auth.close();
  });

  it("stores the secret sealed, bound to its row", async () => {
    const store = await auth.store.get();
    const row = await store.db.selectFrom("user_totp").selectAll().where("user_id", "=", userId).executeTakeFirstOrThrow();
    expect(row.secret).not.toContain(secret);
    expect(store.secrets.isSealed(row.secret)).toBe(true);
    expect(store.secrets.open(row.secret, totpSecretContext(userId))).toBe(secret);
    expect(() => store.secrets.open(row.secret, totpSecretContext(userId + 1))).toThrow();
    expect(recoveryCodes).toHaveLength(10);
    expect(row.recovery_codes).not.toContain(recoveryCodes[0]!.replace("-", ""));
  });

  it("accepts a code once: the same code again is refused (replay), so is an older one", async () => {
    const code = codeAt(secret, fake.now);
    expect(await auth.twoFactor.verify(userId, code)).toMatchObject({ ok: true, method: "totp" });
    expect(await auth.twoFactor.verify(userId, code)).toEqual({ ok: false });
    // the previous step's code is within the skew window, but older than the one used
    expect(await auth.twoFactor.verify(userId, codeAt(secret, fake.now - TOTP_STEP_MS))).toEqual({ ok: false });
    // the next step's code (a clock a little ahead) is fine
    expect(await auth.twoFactor.verify(userId, codeAt(secret, fake.now + TOTP_STEP_MS))).toMatchObject({ ok: true });
  });

  it("accepts a phone one step behind or ahead, not two", async () => {
    tick(10 * TOTP_STEP_MS);
    expect(await auth.twoFactor.verify(userId, codeAt(secret, fake.now - 2 * TOTP_STEP_MS))).toEqual({ ok: false });
    expect(await auth.twoFactor.verify(userId, codeAt(secret, fake.now + 2 * TOTP_STEP_MS))).toEqual({ ok: false });
    expect(await auth.twoFactor.verify(userId, codeAt(secret, fake.now - TOTP_STEP_MS))).toMatchObject({ ok: true });
  });

  it("uses each recovery code once", async () => {
    const [first] = recoveryCodes;
    expect(await auth.twoFactor.verify(userId, first!.toUpperCase())).toEqual({ ok: true, method: "recovery", recoveryCodesLeft: 9 });
    expect(await auth.twoFactor.verify(userId, first)).toEqual({ ok: false });
    expect(await auth.twoFactor.verify(userId, "zzzzz-zzzzz")).toEqual({ ok: false });
  });

  it("password alone makes no session; the right code does, wrong codes are counted and audited", async () => {
    const first = await auth.login({ username: "alice", password: PW, secure: false, ...meta });
    if (first.ok || first.reason !== "two-factor") throw new Error("expected the second step");
    expect(await auth.sessions.listSessions(userId)).toHaveLength(1); // only the one from before enrolment
    const wrong = await completeTwoFactorLogin(auth, { challenge: first.challenge, code: "000000", secure: false, ...meta });
    expect(wrong).toMatchObject({ ok: false, reason: "wrong-code", message: expect.stringMatching(/^wrong code.*4 tries left/) });
    const right = await completeTwoFactorLogin(auth, { challenge: first.challenge, code: codeAt(secret, fake.now), secure: false, ...meta });
    expect(right).toMatchObject({ ok: true, user: { username: "alice" } });
    expect(await auth.sessions.listSessions(userId)).toHaveLength(2);
    // the challenge is used up
    expect(
      await completeTwoFactorLogin(auth, { challenge: first.challenge, code: codeAt(secret, fake.now + TOTP_STEP_MS), secure: false, ...meta }),
    ).toMatchObject({
      ok: false,
      reason: "expired",
    });
    const rows = await auth.audit.queryAudit({ action: "login" });
    expect(rows.map((r) => [r.outcome, r.reason, r.detail ?? null])).toEqual(
      expect.arrayContaining([
        ["ok", null, "two-factor: authenticator code"],
        ["refused", "wrong-2fa-code", null],
      ]),
    );
  });

  it("a challenge ends after 5 wrong codes or 5 minutes, and wrong codes hit the sign-in rate limit", async () => {
    const first = await auth.login({ username: "alice", password: PW, secure: false, ...meta });
    if (first.ok || first.reason !== "two-factor") throw new Error("expected the second step");
    tick(5 * MINUTE + 1);
    expect(await completeTwoFactorLogin(auth, { challenge: first.challenge, code: codeAt(secret, fake.now), secure: false, ...meta })).toMatchObject({
      reason: "expired",
    });
    // the password step and each wrong code take a slot of the 5 per user+address
    const again = await auth.login({ username: "alice", password: PW, secure: false, ...meta });
    if (again.ok || again.reason !== "two-factor") throw new Error("expected the second step");
    const results = [];
    for (let i = 0; i < 4; i++)
      results.push((await completeTwoFactorLogin(auth, { challenge: again.challenge, code: "111111", secure: false, ...meta })).ok ? "ok" : "no");
    const limited = await completeTwoFactorLogin(auth, { challenge: again.challenge, code: codeAt(secret, fake.now), secure: false, ...meta });
    expect(limited).toMatchObject({ ok: false, reason: "rate-limited" });
  });

  it("a pending challenge of a disabled user, or a removed second factor, lets nobody in", async () => {
    const first = await auth.login({ username: "alice", password: PW, secure: false, ...meta });
    if (first.ok || first.reason !== "two-factor") throw new Error("expected the second step");
    await auth.users.createUser({ username: "root", password: PW, role: "admin" });
    await auth.users.setDisabled("alice", true);
    expect(await completeTwoFactorLogin(auth, { challenge: first.challenge, code: codeAt(secret, fake.now), secure: false, ...meta })).toMatchObject({
      reason: "expired",
    });
    await auth.users.setDisabled("alice", false);
    expect(await auth.twoFactor.remove(userId)).toBe(true);
    expect((await auth.login({ username: "alice", password: PW, secure: false, ...meta })).ok).toBe(true);
  });
});
