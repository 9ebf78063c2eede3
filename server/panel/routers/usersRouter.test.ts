/**
 * The `users` area through the panel's real API endpoint (request guard, tRPC, real SQLite and
 * argon2): admins manage users; everyone else is refused and audited; the rules that keep the
 * panel manageable (no self-lockout, never the last admin) hold; passwords never reach the
 * audit log; a reset or a disable ends that user's sessions and live streams at once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../../agent/main";
import type { Panel } from "../instance";
import { addUser, call, login, openEventStream, PASSWORD, startTestAgent, startTestPanel, type RpcResult, type TestPanel } from "../panelTestHarness";
import type { PanelUser } from "../../contract/users";

/** the error event that ends a stream, with its data line */
const ENDED = /event: serialized-error\ndata: [^\n]*\n/;
const NEW_PASSWORD = "a fresh passphrase for bob";
const RESET_PASSWORD = "reset by the on-call admin";
/** Every password this file sends: none may ever appear in the audit log. */
const SECRETS = [PASSWORD, NEW_PASSWORD, RESET_PASSWORD, "weak", "tiny", "carol-passphrase-xyz", "x".repeat(5000)];

let agent: RunningAgent;
let tp: TestPanel;
let panel: Panel;
const cookie: Record<string, string> = {};

beforeAll(async () => {
  agent = await startTestAgent();
  tp = await startTestPanel(agent, { panel: { streamRecheckMs: 60_000 } });
  panel = tp.panel;
  await addUser(panel, "ada", "admin");
  await addUser(panel, "alan", "admin");
  await addUser(panel, "otto", "operator", ["vllm-embed-*"]);
  await addUser(panel, "vera", "viewer");
  for (const name of ["ada", "alan", "otto", "vera"]) cookie[name] = await login(panel, name);
}, 30_000);

afterAll(async () => {
  await tp?.close();
  await agent?.close();
});

const as = (user: string) => cookie[user]!;
const mutate = (path: string, input: unknown, user: string | null = "ada") => call(panel, `users.${path}`, { input, cookie: user ? as(user) : null });
const list = (user: string | null = "ada") => call(panel, "users.list", { method: "GET", cookie: user ? as(user) : null });
const usersOf = (r: RpcResult) => r.json!.result!.data as PanelUser[];
const messageOf = (r: RpcResult) => r.json?.error?.message ?? r.text;
const lastAuditId = async () => (await panel.auth.audit.queryAudit({ limit: 1 }))[0]?.id ?? 0;
const auditSince = async (mark: number) => (await panel.auth.audit.queryAudit({ limit: 1000 })).filter((r) => r.id > mark);

async function meOf(c: string) {
  const r = await call(panel, "session.me", { method: "GET", cookie: c });
  return (r.json!.result!.data as { user: { name: string; role: string; unitPatterns: string[] } | null }).user;
}

describe("an admin manages users", () => {
  it("lists every user without password hashes, with roles, patterns, state and last sign-in", async () => {
    const r = await list();
    expect(r.status, r.text).toBe(200);
    const users = usersOf(r);
    expect(users.map((u) => u.name)).toEqual(["ada", "alan", "otto", "vera"]);
    expect(users.find((u) => u.name === "otto")).toMatchObject({ role: "operator", unitPatterns: ["vllm-embed-*"], disabled: false, hasPassword: true });
    for (const u of users) {
      expect(u.createdAt).toBeGreaterThan(0);
      expect(u.lastSignInAt).toBeGreaterThan(0); // all signed in above
    }
    expect(r.text).not.toMatch(/argon2|hash/i);
  });

  it("creates a user who can then sign in; the audit row says what was created, never the password", async () => {
    const mark = await lastAuditId();
    const r = await mutate("create", {
      username: "bob",
      role: "operator",
      unitPatterns: [" vllm-team-a-* ", "", "vllm-team-a-*", "vllm-x.service"],
      password: NEW_PASSWORD,
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json?.result?.data).toMatchObject({
      name: "bob",
      role: "operator",
      unitPatterns: ["vllm-team-a-*", "vllm-x.service"],
      disabled: false,
      lastSignInAt: null,
    });
    const rows = await auditSince(mark);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      user: "ada",
      role: "admin",
      action: "user.add",
      outcome: "ok",
      unit: null,
      sourceAddr: "10.20.30.40",
      detail: "user=bob role=operator units=vllm-team-a-*,vllm-x.service",
    });
    const c = await login(panel, "bob", NEW_PASSWORD);
    expect(await meOf(c)).toMatchObject({ name: "bob", role: "operator", unitPatterns: ["vllm-team-a-*", "vllm-x.service"] });
    expect(usersOf(await list()).find((u) => u.name === "bob")!.lastSignInAt).toBeGreaterThan(0);
  });

  it("refuses a name that exists (any case) with CONFLICT", async () => {
    const mark = await lastAuditId();
    const r = await mutate("create", { username: "BOB", role: "viewer", unitPatterns: [], password: "carol-passphrase-xyz" });
    expect(r.status).toBe(409);
    expect(messageOf(r)).toBe("A user named 'BOB' already exists.");
    expect(await auditSince(mark)).toEqual([
      expect.objectContaining({ user: "ada", action: "user.add", outcome: "refused", detail: "user=BOB: A user named 'BOB' already exists." }),
    ]);
  });

  it("updates role and unit patterns; the change applies to the user's next request and is audited", async () => {
    const c = await login(panel, "bob", NEW_PASSWORD);
    const mark = await lastAuditId();
    const r = await mutate("update", { username: "Bob", role: "viewer", unitPatterns: ["vllm-team-b-*"] });
    expect(r.status, r.text).toBe(200);
    expect(r.json?.result?.data).toMatchObject({ name: "bob", role: "viewer", unitPatterns: ["vllm-team-b-*"] });
    expect(await meOf(c)).toMatchObject({ name: "bob", role: "viewer" });
    expect((await auditSince(mark))[0]).toMatchObject({
      action: "user.update",
      outcome: "ok",
      detail: "user=bob role operator→viewer units vllm-team-a-*,vllm-x.service→vllm-team-b-*",
    });
    const back = await mutate("update", { username: "bob", role: "operator" });
    expect(back.status, back.text).toBe(200);
    expect(back.json?.result?.data).toMatchObject({ role: "operator", unitPatterns: ["vllm-team-b-*"] });
    const cleared = await mutate("update", { username: "bob", unitPatterns: [] });
    expect(cleared.json?.result?.data).toMatchObject({ role: "operator", unitPatterns: [] });
    expect((await panel.auth.audit.queryAudit({ action: "user.update", limit: 1 }))[0]!.detail).toBe("user=bob units vllm-team-b-*→(none)");
  });

  it("an update with nothing to change, or of an unknown user, is refused clearly", async () => {
    const nothing = await mutate("update", { username: "bob" });
    expect(nothing.status).toBe(400);
    expect(messageOf(nothing)).toMatch(/nothing to change/);
    const unknown = await mutate("update", { username: "nobody", role: "viewer" });
    expect(unknown.status).toBe(404);
    expect(messageOf(unknown)).toBe("There is no user named 'nobody'.");
    expect((await panel.auth.audit.queryAudit({ action: "user.update", limit: 1 }))[0]).toMatchObject({
      outcome: "refused",
      detail: "user=nobody: There is no user named 'nobody'.",
    });
  });

  it("disabling ends the user's sessions and open streams at once; enabling lets them sign in again", async () => {
    const c = await login(panel, "bob", NEW_PASSWORD);
    const stream = await openEventStream(panel, c);
    await stream.until(/"kind":"host-snapshot"/);
    const mark = await lastAuditId();
    const r = await mutate("setDisabled", { username: "bob", disabled: true });
    expect(r.status, r.text).toBe(200);
    expect(r.json?.result?.data).toMatchObject({ name: "bob", disabled: true });
    // the panel rechecks streams every 60 s here: ending within 3 s means it was told at once
    expect(await stream.until(ENDED, 3000)).toMatch(/Your session has ended/);
    expect(await meOf(c)).toBeNull();
    expect(await panel.auth.sessions.listSessions((await panel.auth.users.getUser("bob"))!.id)).toHaveLength(0);
    expect((await call(panel, "session.login", { input: { username: "bob", password: NEW_PASSWORD } })).status).toBe(401);
    expect((await auditSince(mark)).find((row) => row.action === "user.disable")).toMatchObject({
      user: "ada",
      outcome: "ok",
      detail: "user=bob sessions ended",
    });

    const enabled = await mutate("setDisabled", { username: "bob", disabled: false });
    expect(enabled.status, enabled.text).toBe(200);
    expect(enabled.json?.result?.data).toMatchObject({ disabled: false });
    expect((await panel.auth.audit.queryAudit({ action: "user.enable", limit: 1 }))[0]).toMatchObject({ user: "ada", outcome: "ok", detail: "user=bob" });
    await login(panel, "bob", NEW_PASSWORD);
  });

  it("a password reset ends every session of the user and their open streams; only the new password works", async () => {
    const first = await login(panel, "bob", NEW_PASSWORD);
    const second = await login(panel, "bob", NEW_PASSWORD, { "x-gpudeck-peer": "10.9.9.9" });
    const stream = await openEventStream(panel, second);
    await stream.until(/"kind":"host-snapshot"/);
    const mark = await lastAuditId();
    const r = await mutate("resetPassword", { username: "bob", password: RESET_PASSWORD });
    expect(r.status, r.text).toBe(200);
    expect(await stream.until(ENDED, 3000)).toMatch(/Your session has ended/);
    expect(await meOf(first)).toBeNull();
    expect(await meOf(second)).toBeNull();
    expect((await call(panel, "session.login", { input: { username: "bob", password: NEW_PASSWORD } })).status).toBe(401);
    await login(panel, "bob", RESET_PASSWORD);
    expect((await auditSince(mark)).find((row) => row.action === "user.passwd")).toMatchObject({
      user: "ada",
      outcome: "ok",
      detail: "user=bob sessions ended",
    });
    // the admin's own session is untouched
    expect(await meOf(as("ada"))).toMatchObject({ name: "ada" });
  });

  it("a reset to a weak password is refused with the rule and changes nothing", async () => {
    const c = await login(panel, "bob", RESET_PASSWORD);
    for (const [password, rule] of [
      ["tiny", /at least 12 characters/],
      ["bob", /at least 12/],
      ["aaaaaaaaaaaaaaaa", /one repeated character/],
      ["x".repeat(5000), /at most 1024 characters/],
    ] as const) {
      const r = await mutate("resetPassword", { username: "bob", password });
      expect(r.status, password.slice(0, 20)).toBe(400);
      expect(messageOf(r)).toMatch(rule);
    }
    expect(await meOf(c)).toMatchObject({ name: "bob" });
  });
});

describe("input validation", () => {
  const valid = { username: "carol", role: "viewer", unitPatterns: [], password: "carol-passphrase-xyz" };
  const cases: [string, unknown, RegExp][] = [
    ["a name with a shell metacharacter", { ...valid, username: "a;reboot" }, /^username: username may only contain ASCII letters/],
    ["a name starting with '-'", { ...valid, username: "-rf" }, /must start with a letter or digit/],
    ["a Unicode look-alike name", { ...valid, username: "аda" }, /may only contain ASCII/],
    ["an empty name", { ...valid, username: "  " }, /username is required/],
    ["a name over 128 characters", { ...valid, username: "a".repeat(129) }, /at most 128 characters/],
    ["a name that is not a string", { ...valid, username: { $ne: null } }, /username must be a string/],
    ["an unknown role", { ...valid, role: "root" }, /role must be viewer, operator or admin/],
    ["a pattern starting with '-'", { ...valid, unitPatterns: ["-H evil"] }, /must not start with '-'/],
    ["a pattern with a path", { ...valid, unitPatterns: ["../../etc/*"] }, /may only contain ASCII letters/],
    ["a pattern over 256 characters", { ...valid, unitPatterns: [`${"a".repeat(300)}*`] }, /longer than 256/],
    ["patterns that are not a list", { ...valid, unitPatterns: "vllm-*" }, /unitPatterns must be a list/],
    ["too many patterns", { ...valid, unitPatterns: Array.from({ length: 65 }, (_, i) => `vllm-${i}-*`) }, /at most 64 unit patterns/],
    ["a short password", { ...valid, password: "weak" }, /^password: password must be at least 12 characters/],
    ["the name as password", { ...valid, username: "carol-passphrase-xyz" }, /must not be the username/],
    ["an oversized password", { ...valid, password: "x".repeat(5000) }, /at most 1024 characters/],
    ["an unknown key", { ...valid, isAdmin: true }, /unrecognized key|isAdmin/i],
    ["no password", { username: "carol", role: "viewer" }, /password/],
  ];
  it.each(cases)("create refuses %s, clearly, audited, nothing created", async (_label, input, message) => {
    const mark = await lastAuditId();
    const r = await mutate("create", input);
    expect(r.status, r.text).toBe(400);
    expect(messageOf(r)).toMatch(message);
    expect(await panel.auth.users.getUser("carol")).toBeNull();
    expect((await panel.auth.users.listUsers()).map((u) => u.username)).not.toContain("carol-passphrase-xyz");
    const rows = await auditSince(mark);
    expect(rows).toHaveLength(1); // once, not twice (the endpoint's own hook does not record it again)
    expect(rows[0]).toMatchObject({ user: "ada", action: "user.add", outcome: "refused", unit: null });
    expect(rows[0]!.detail).toContain(messageOf(r).split(": ").pop()!.slice(0, 20));
  });

  it("setDisabled and update refuse unknown keys and wrong types", async () => {
    const extra = await mutate("setDisabled", { username: "bob", disabled: true, force: true });
    expect(extra.status).toBe(400);
    expect(messageOf(extra)).toMatch(/unrecognized key/i);
    const type = await mutate("setDisabled", { username: "bob", disabled: "yes" });
    expect(type.status).toBe(400);
    expect(messageOf(type)).toMatch(/disabled must be true or false/);
    const role = await mutate("update", { username: "bob", role: "superuser" });
    expect(role.status).toBe(400);
    expect(messageOf(role)).toMatch(/role must be viewer, operator or admin/);
    expect(await panel.auth.users.getUser("bob")).toMatchObject({ disabled: false, role: "operator" });
  });
});

describe("who may manage users", () => {
  const attempts: [string, string, unknown, string][] = [
    ["create", "create", { username: "mallory", role: "admin", unitPatterns: [], password: "mallory passphrase" }, "user.add"],
    ["update", "update", { username: "otto", role: "admin" }, "user.update"],
    ["disable", "setDisabled", { username: "ada", disabled: true }, "user.disable"],
    ["enable", "setDisabled", { username: "ada", disabled: false }, "user.enable"],
    ["reset a password", "resetPassword", { username: "ada", password: "mallory passphrase" }, "user.passwd"],
  ];
  for (const who of ["vera", "otto"]) {
    it.each(attempts)(`${who} may not %s: FORBIDDEN with a clear message, audited`, async (_label, path, input, action) => {
      const mark = await lastAuditId();
      const r = await mutate(path, input, who);
      expect(r.status).toBe(403);
      expect(r.json?.error?.data?.code).toBe("FORBIDDEN");
      expect(messageOf(r)).toBe("Not allowed: only admins can manage users.");
      expect(await auditSince(mark)).toEqual([
        expect.objectContaining({
          user: who,
          action,
          outcome: "refused",
          unit: null,
          sourceAddr: "10.20.30.40",
          detail: expect.stringMatching(/only admins can manage users/),
        }),
      ]);
    });

    it(`${who} may not list users, and the refusal is audited`, async () => {
      const mark = await lastAuditId();
      const r = await list(who);
      expect(r.status).toBe(403);
      expect(messageOf(r)).toBe("Not allowed: only admins can manage users.");
      expect(await auditSince(mark)).toEqual([expect.objectContaining({ user: who, action: "user.list", outcome: "refused" })]);
    });
  }

  it("nothing the refused callers asked for happened", async () => {
    expect(await panel.auth.users.getUser("mallory")).toBeNull();
    expect((await panel.auth.users.getUser("otto"))!.role).toBe("operator");
    expect((await panel.auth.users.getUser("ada"))!.disabled).toBe(false);
  });

  it("a wrong-typed input from a non-admin gets FORBIDDEN, not a validation hint", async () => {
    const r = await mutate("create", { username: 42 }, "vera");
    expect(r.status).toBe(403);
  });

  it("signed out: UNAUTHORIZED, and a change attempt is audited by address", async () => {
    const mark = await lastAuditId();
    const r = await mutate("setDisabled", { username: "ada", disabled: true }, null);
    expect(r.status).toBe(401);
    expect(messageOf(r)).toMatch(/^Not signed in/);
    expect(await auditSince(mark)).toEqual([expect.objectContaining({ user: null, action: "user.disable", outcome: "refused", sourceAddr: "10.20.30.40" })]);
    expect((await list(null)).status).toBe(401);
  });
});

describe("rules that keep the panel manageable", () => {
  it("an admin cannot disable, demote or reset themself here (any spelling of their name)", async () => {
    const mark = await lastAuditId();
    const disable = await mutate("setDisabled", { username: "ADA", disabled: true });
    expect(disable.status).toBe(403);
    expect(messageOf(disable)).toBe("You cannot disable your own account; another admin has to.");
    const demote = await mutate("update", { username: "ada", role: "operator" });
    expect(demote.status).toBe(403);
    expect(messageOf(demote)).toBe("You cannot change your own role; another admin has to.");
    const reset = await mutate("resetPassword", { username: "ada", password: "my own new passphrase" });
    expect(reset.status).toBe(403);
    expect(messageOf(reset)).toMatch(/account page/);
    expect((await auditSince(mark)).map((r) => [r.action, r.outcome, r.user])).toEqual([
      ["user.passwd", "refused", "ada"],
      ["user.update", "refused", "ada"],
      ["user.disable", "refused", "ada"],
    ]);
    expect(await panel.auth.users.getUser("ada")).toMatchObject({ role: "admin", disabled: false });
    expect(await meOf(as("ada"))).toMatchObject({ name: "ada", role: "admin" });
    // keeping their own role while changing patterns is no demotion
    expect((await mutate("update", { username: "ada", role: "admin", unitPatterns: ["vllm-*"] })).status).toBe(200);
  });

  it("another admin can be demoted and disabled while one admin remains", async () => {
    const r = await mutate("update", { username: "alan", role: "operator" }, "ada");
    expect(r.status, r.text).toBe(200);
    const back = await mutate("update", { username: "alan", role: "admin" }, "ada");
    expect(back.status, back.text).toBe(200);
    const off = await mutate("setDisabled", { username: "alan", disabled: true }, "ada");
    expect(off.status, off.text).toBe(200);
    expect(await meOf(as("alan"))).toBeNull();
    expect((await mutate("setDisabled", { username: "alan", disabled: false }, "ada")).status).toBe(200);
    cookie.alan = await login(panel, "alan");
  });

  it("the last enabled admin can be neither disabled nor demoted (a proxy admin without a local account tries)", async () => {
    const proxied = await startTestPanel(agent, {
      env: { GPUDECK_PROXY_AUTH_HEADER: "x-forwarded-user", GPUDECK_TRUSTED_PROXIES: "10.20.30.40", GPUDECK_PROXY_DEFAULT_ROLE: "admin" },
      panel: { background: false },
    });
    try {
      const p = proxied.panel;
      await addUser(p, "root", "admin");
      const asProxy = (path: string, input: unknown) => call(p, `users.${path}`, { input, headers: { "x-forwarded-user": "oncall" } });
      const disable = await asProxy("setDisabled", { username: "root", disabled: true });
      expect(disable.status, disable.text).toBe(409);
      expect(messageOf(disable)).toBe("Refusing to disable the last enabled admin: make another user an admin first.");
      const demote = await asProxy("update", { username: "root", role: "viewer" });
      expect(demote.status).toBe(409);
      expect(messageOf(demote)).toBe("Refusing to demote the last enabled admin: make another user an admin first.");
      expect(await p.auth.users.getUser("root")).toMatchObject({ role: "admin", disabled: false });
      expect((await p.auth.audit.queryAudit({ user: "oncall", limit: 10 })).map((r) => [r.action, r.outcome])).toEqual([
        ["user.update", "refused"],
        ["user.disable", "refused"],
      ]);
      // with a second admin, the first one can go
      expect((await asProxy("create", { username: "second", role: "admin", unitPatterns: [], password: PASSWORD })).status).toBe(200);
      expect((await asProxy("setDisabled", { username: "root", disabled: true })).status).toBe(200);
    } finally {
      await proxied.close();
    }
  });
});

describe("the audit log and passwords", () => {
  it("no password sent in this file appears anywhere in the audit log", async () => {
    const rows = await panel.auth.audit.queryAudit({ limit: 1000 });
    expect(rows.filter((r) => r.action.startsWith("user.")).length).toBeGreaterThan(20);
    const text = JSON.stringify(rows);
    for (const secret of SECRETS.filter((s) => s.length >= 12)) expect(text).not.toContain(secret);
    for (const r of rows.filter((row) => row.action.startsWith("user."))) {
      expect(r.detail ?? "").not.toMatch(/password=|"password"/i);
      expect(r.unit).toBeNull();
    }
  });
});

describe("demo mode", () => {
  it("has no users: every users procedure says so", async () => {
    const demo = await startTestPanel(agent, { env: { GPUDECK_DEMO: "1" }, panel: { background: false } });
    try {
      const l = await call(demo.panel, "users.list", { method: "GET" });
      expect(l.status).toBe(400);
      expect(l.json?.error?.message).toMatch(/^Demo mode has no users/);
      const c = await call(demo.panel, "users.create", { input: { username: "x", role: "viewer", unitPatterns: [], password: PASSWORD } });
      expect(c.status).toBe(400);
      expect(c.json?.error?.message).toMatch(/^Demo mode has no users/);
      expect(await demo.panel.auth.users.listUsers()).toHaveLength(0);
    } finally {
      await demo.close();
    }
  });
});
