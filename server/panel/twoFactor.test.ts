/**
 * Two-factor sign-in through the panel's real endpoint: enrolment from the Account page's calls,
 * the sign-in's second step (no session before the right code; a wrong code is a clear refusal;
 * a code works once), panel.require_2fa_for (a session of such a role can only enrol until it
 * has), turning it off (password and code) and an admin's reset, each audited; API tokens are
 * not asked for a code.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../agent/main";
import { codeAt, TOTP_STEP_MS } from "../auth/totp";
import type { Panel } from "./instance";
import { addUser, bearerHeaders, call, cookiePair, login, PASSWORD, startTestAgent, startTestPanel, type TestPanel } from "./panelTestHarness";

let agent: RunningAgent;
let tp: TestPanel;
let panel: Panel;
const now = () => tp.clock.now();
/** each step of the test in a later time step: a code works once */
const nextStep = () => {
  tp.clock.offsetMs += TOTP_STEP_MS;
};

beforeAll(async () => {
  agent = await startTestAgent();
  tp = await startTestPanel(agent, { env: { GPUDECK_REQUIRE_2FA_FOR: "admin" } });
  panel = tp.panel;
  await addUser(panel, "ada", "admin");
  await addUser(panel, "bea", "admin");
  await addUser(panel, "otto", "operator", ["vllm-*"]);
}, 30_000);

afterAll(async () => {
  await tp?.close();
  await agent?.close();
});

async function enrol(cookie: string): Promise<{ secret: string; recoveryCodes: string[] }> {
  const begun = await call(panel, "twoFactor.begin", { cookie });
  expect(begun.status, begun.text).toBe(200);
  const { secret, qrDataUrl, otpauthUrl } = begun.json!.result!.data as { secret: string; qrDataUrl: string; otpauthUrl: string };
  expect(qrDataUrl).toMatch(/^data:image\/png;base64,/);
  expect(otpauthUrl).toMatch(/^otpauth:\/\/totp\/gpudeck:/);
  const wrong = await call(panel, "twoFactor.enable", { input: { code: "000000" }, cookie });
  expect(wrong.json?.error?.message).toMatch(/not right/);
  const enabled = await call(panel, "twoFactor.enable", { input: { code: codeAt(secret, now()) }, cookie });
  expect(enabled.status, enabled.text).toBe(200);
  nextStep();
  return { secret, recoveryCodes: (enabled.json!.result!.data as { recoveryCodes: string[] }).recoveryCodes };
}

async function passwordStep(username: string, peer: string): Promise<string> {
  const r = await call(panel, "session.login", { input: { username, password: PASSWORD }, headers: { "x-gpudeck-peer": peer } });
  expect(r.status, r.text).toBe(200);
  expect(r.headers.getSetCookie()).toEqual([]); // no session yet
  const data = r.json!.result!.data as { user: unknown; twoFactor: { challenge: string } | null };
  expect(data.user).toBeNull();
  return data.twoFactor!.challenge;
}

describe("panel.require_2fa_for = admin", () => {
  let adaSecret = "";

  it("sends an admin without a second factor to enrol; nothing else works until they have", async () => {
    const cookie = await login(panel, "ada");
    const me = await call(panel, "session.me", { method: "GET", cookie });
    expect(me.json!.result!.data).toMatchObject({ user: { name: "ada", role: "admin" }, twoFactorEnrolment: true });
    for (const path of ["hosts.list", "tokens.list", "users.list"]) {
      const r = await call(panel, path, { method: "GET", cookie });
      expect(r.status, path).toBe(401);
      expect(r.json?.error?.message).toMatch(/set up two-factor sign-in on the Account page/);
    }
    const status = await call(panel, "twoFactor.status", { method: "GET", cookie });
    expect(status.json!.result!.data).toMatchObject({ enabled: false, required: true });
    adaSecret = (await enrol(cookie)).secret;
    const after = await call(panel, "session.me", { method: "GET", cookie });
    expect(after.json!.result!.data).toMatchObject({ twoFactorEnrolment: false });
    expect((await call(panel, "users.list", { method: "GET", cookie })).status).toBe(200);
    const audit = await panel.auth.audit.queryAudit({ action: "user.2fa.enable" });
    expect(audit[0]).toMatchObject({ user: "ada", outcome: "ok" });
  });

  it("signs in in two steps: the session starts only with the right code, a wrong one is refused clearly, a code works once", async () => {
    const challenge = await passwordStep("ada", "10.2.0.1");
    const wrong = await call(panel, "session.loginCode", { input: { challenge, code: "123456" }, headers: { "x-gpudeck-peer": "10.2.0.1" } });
    expect(wrong.status).toBe(401);
    expect(wrong.json?.error?.message).toMatch(/^Wrong code: .*tries left/);
    expect(wrong.headers.getSetCookie()).toEqual([]);
    const code = codeAt(adaSecret, now());
    const right = await call(panel, "session.loginCode", { input: { challenge, code }, headers: { "x-gpudeck-peer": "10.2.0.1" } });
    expect(right.status, right.text).toBe(200);
    const cookie = cookiePair(right.headers);
    expect((await call(panel, "users.list", { method: "GET", cookie })).status).toBe(200);
    // the same code for a second sign-in within its 30 s: refused (replay)
    const again = await passwordStep("ada", "10.2.0.1");
    const replay = await call(panel, "session.loginCode", { input: { challenge: again, code }, headers: { "x-gpudeck-peer": "10.2.0.1" } });
    expect(replay.status).toBe(401);
    // an unknown challenge asks for the password again
    const bogus = await call(panel, "session.loginCode", { input: { challenge: "x".repeat(43), code }, headers: { "x-gpudeck-peer": "10.2.0.1" } });
    expect(bogus.json?.error).toMatchObject({ message: expect.stringMatching(/enter your password again/), data: { code: "PRECONDITION_FAILED" } });
  });

  it("an admin resets someone's second factor (audited); they may not turn off a required one themself", async () => {
    nextStep();
    const challenge = await passwordStep("ada", "10.2.0.2");
    const right = await call(panel, "session.loginCode", { input: { challenge, code: codeAt(adaSecret, now()) }, headers: { "x-gpudeck-peer": "10.2.0.2" } });
    const ada = cookiePair(right.headers);
    const bea = await login(panel, "bea");
    await enrol(bea);
    const off = await call(panel, "twoFactor.disable", { input: { password: PASSWORD, code: codeAt(adaSecret, now()) }, cookie: ada });
    expect(off.status).toBe(403);
    // refused for the role before the password is looked at (a wrong one is not what it says)
    const offWrong = await call(panel, "twoFactor.disable", { input: { password: "not the password at all", code: "000000" }, cookie: ada });
    expect(offWrong.status).toBe(403);
    expect(offWrong.json?.error?.message).toMatch(/must sign in with two factors/);
    expect((await call(panel, "users.resetTwoFactor", { input: { username: "ada" }, cookie: ada })).status).toBe(403);
    const reset = await call(panel, "users.resetTwoFactor", { input: { username: "bea" }, cookie: ada });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.json!.result!.data).toMatchObject({ name: "bea", twoFactor: false });
    expect((await panel.auth.audit.queryAudit({ action: "user.2fa.reset" }))[0]).toMatchObject({
      user: "ada",
      outcome: "ok",
      detail: "user=bea two-factor sign-in reset",
    });
    // bea signs in with the password alone again, and is sent to enrol
    const beaAgain = await login(panel, "bea");
    expect((await call(panel, "session.me", { method: "GET", cookie: beaAgain })).json!.result!.data).toMatchObject({ twoFactorEnrolment: true });
  });

  it("API tokens are not asked for a code", async () => {
    const bea = (await panel.auth.users.getUser("bea"))!;
    const { token } = await panel.auth.tokens.create({ owner: bea, name: "ci", kind: "service", role: "viewer", expiresInDays: 1 });
    const r = await call(panel, "hosts.list", { method: "GET", headers: bearerHeaders(token) });
    expect(r.status, r.text).toBe(200);
  });
});

describe("a role that need not use it", () => {
  it("turns it on and off with password and code; a wrong password is refused and audited", async () => {
    const cookie = await login(panel, "otto");
    expect((await call(panel, "session.me", { method: "GET", cookie })).json!.result!.data).toMatchObject({ twoFactorEnrolment: false });
    const { secret, recoveryCodes } = await enrol(cookie);
    expect(recoveryCodes).toHaveLength(10);
    const bad = await call(panel, "twoFactor.disable", { input: { password: "not the password at all", code: codeAt(secret, now()) }, cookie });
    expect(bad.status).toBe(401);
    expect((await panel.auth.audit.queryAudit({ action: "user.2fa.disable" }))[0]).toMatchObject({ outcome: "refused" });
    // a recovery code signs in once
    const challenge = await passwordStep("otto", "10.2.0.3");
    const rec = await call(panel, "session.loginCode", { input: { challenge, code: recoveryCodes[0] }, headers: { "x-gpudeck-peer": "10.2.0.3" } });
    expect(rec.status, rec.text).toBe(200);
    expect(rec.json!.result!.data).toMatchObject({ recoveryCodesLeft: 9 });
    const ok = await call(panel, "twoFactor.disable", { input: { password: PASSWORD, code: codeAt(secret, now()) }, cookie });
    expect(ok.status, ok.text).toBe(200);
    expect((await call(panel, "session.login", { input: { username: "otto", password: PASSWORD } })).headers.getSetCookie()).toHaveLength(1);
  });

  it("new recovery codes, with password and code: the old ones stop working, the new ones sign in once; audited", async () => {
    await addUser(panel, "rita", "operator", ["vllm-*"]);
    const cookie = await login(panel, "rita");
    const { secret, recoveryCodes: old } = await enrol(cookie);
    const wrong = await call(panel, "twoFactor.renewRecoveryCodes", { input: { password: PASSWORD, code: "000000" }, cookie });
    expect(wrong.status).toBe(401);
    expect((await panel.auth.audit.queryAudit({ action: "user.2fa.recovery-codes" }))[0]).toMatchObject({ user: "rita", outcome: "refused" });
    const renewed = await call(panel, "twoFactor.renewRecoveryCodes", { input: { password: PASSWORD, code: codeAt(secret, now()) }, cookie });
    expect(renewed.status, renewed.text).toBe(200);
    nextStep();
    const fresh = (renewed.json!.result!.data as { recoveryCodes: string[] }).recoveryCodes;
    expect(fresh).toHaveLength(10);
    expect(fresh.some((c) => old.includes(c))).toBe(false);
    expect((await panel.auth.audit.queryAudit({ action: "user.2fa.recovery-codes" }))[0]).toMatchObject({ user: "rita", outcome: "ok" });
    const status = await call(panel, "twoFactor.status", { method: "GET", cookie });
    expect(status.json!.result!.data).toMatchObject({ enabled: true, recoveryCodesLeft: 10 });
    // an old code no longer signs in; a new one does
    const c1 = await passwordStep("rita", "10.2.0.4");
    const stale = await call(panel, "session.loginCode", { input: { challenge: c1, code: old[0] }, headers: { "x-gpudeck-peer": "10.2.0.4" } });
    expect(stale.status).toBe(401);
    const c2 = await passwordStep("rita", "10.2.0.4");
    const good = await call(panel, "session.loginCode", { input: { challenge: c2, code: fresh[0] }, headers: { "x-gpudeck-peer": "10.2.0.4" } });
    expect(good.status, good.text).toBe(200);
    expect(good.json!.result!.data).toMatchObject({ recoveryCodesLeft: 9 });
  });
});
