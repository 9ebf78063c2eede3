import { hash } from "@node-rs/argon2";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openPanelDb, type PanelDb } from "./db";
import { sha256Hex } from "./crypto";
import { SessionStore } from "./sessions";
import { AuthError } from "./types";
import { unitPatternProblem, usernameProblem, UserStore } from "./users";
import { FakeClock, HOUR, MINUTE, tempDataDir } from "./testHelpers";

const PW = "correct horse battery staple";

async function expectAuthError(p: Promise<unknown> | (() => unknown), code: string): Promise<void> {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (err) {
    expect(err).toBeInstanceOf(AuthError);
    expect((err as AuthError).code).toBe(code);
    return;
  }
  throw new Error(`expected AuthError ${code}`);
}

describe("UserStore", () => {
  let tmp: ReturnType<typeof tempDataDir>;
  let db: PanelDb;
  let fake: FakeClock;
  let users: UserStore;

  beforeEach(() => {
    tmp = tempDataDir();
    db = openPanelDb(tmp.dir);
    fake = new FakeClock();
    users = new UserStore(db, { clock: fake.clock });
  });
  afterEach(() => {
    db.close();
    tmp.cleanup();
  });

  describe("users", () => {
    it("creates a user with an argon2id hash and finds it case-insensitively", async () => {
      const u = await users.createUser({
        username: "Alice",
        password: PW,
        role: "operator",
        unitPatterns: ["vllm-team-a-*", " vllm-team-a-* ", "tgi-*.service"],
      });
      expect(u).toMatchObject({
        username: "Alice",
        role: "operator",
        unitPatterns: ["vllm-team-a-*", "tgi-*.service"],
        disabled: false,
        hasPassword: true,
        createdAt: fake.now,
        passwordChangedAt: fake.now,
      });
      expect(users.getUser("alice")?.id).toBe(u.id);
      expect(users.getUser("ALICE")?.id).toBe(u.id);
      const row = db.prepare("SELECT password_hash FROM users WHERE id = ?").get(u.id) as { password_hash: string };
      expect(row.password_hash).toMatch(/^\$argon2id\$/);
      expect(row.password_hash).not.toContain(PW);
      expect(JSON.stringify(u)).not.toContain("argon2");
    });

    it("refuses duplicates, differing only in case too", async () => {
      await users.createUser({ username: "alice", password: PW, role: "viewer" });
      await expectAuthError(users.createUser({ username: "ALICE", password: PW, role: "viewer" }), "user-exists");
    });

    it("refuses bad usernames, roles, passwords and unit patterns", async () => {
      await expectAuthError(users.createUser({ username: "-rf", password: PW, role: "viewer" }), "invalid-username");
      await expectAuthError(users.createUser({ username: "=HYPERLINK(1)", password: PW, role: "viewer" }), "invalid-username");
      await expectAuthError(users.createUser({ username: "bob", password: PW, role: "root" as never }), "invalid-role");
      await expectAuthError(users.createUser({ username: "bob", password: "short", role: "viewer" }), "weak-password");
      await expectAuthError(users.createUser({ username: "bobbobbobbob", password: "BOBBOBBOBBOB", role: "viewer" }), "weak-password");
      await expectAuthError(users.createUser({ username: "bob", password: PW, role: "operator", unitPatterns: ["a;reboot"] }), "invalid-unit-pattern");
      await expectAuthError(users.createUser({ username: "bob", password: PW, role: "operator", unitPatterns: ["--help"] }), "invalid-unit-pattern");
      expect(users.listUsers()).toEqual([]);
    });

    it("validates usernames and unit patterns", () => {
      for (const ok of ["alice", "a", "alice.smith@example.com", "ops_1", "bob+oncall"]) expect(usernameProblem(ok)).toBeNull();
      for (const bad of ["", " alice", "alice bob", "-x", ".x", "a/b", "a;b", "$(id)", "ａlice", "x".repeat(129), "a\nb"]) {
        expect(usernameProblem(bad)).not.toBeNull();
      }
      for (const ok of ["vllm-team-a-*", "*", "tgi-?.service", "getty@tty1.service"]) expect(unitPatternProblem(ok)).toBeNull();
      for (const bad of ["", "-x*", "a b", "$(id)*", "a/b", "x".repeat(300)]) expect(unitPatternProblem(bad)).not.toBeNull();
    });

    it("lists users sorted by name", async () => {
      await users.createUser({ username: "zed", password: PW, role: "viewer" });
      await users.createUser({ username: "Amy", password: PW, role: "admin" });
      await users.createUser({ username: "bob", password: null, role: "operator" });
      expect(users.listUsers().map((u) => u.username)).toEqual(["Amy", "bob", "zed"]);
      expect(users.getUser("bob")).toMatchObject({ hasPassword: false, passwordChangedAt: null });
    });

    it("verifyCredentials distinguishes failures for the audit log", async () => {
      await users.createUser({ username: "alice", password: PW, role: "viewer" });
      await users.createUser({ username: "proxyonly", password: null, role: "viewer" });
      expect(await users.verifyCredentials("alice", PW)).toMatchObject({ ok: true, user: { username: "alice" } });
      expect(await users.verifyCredentials("ALICE", PW)).toMatchObject({ ok: true });
      expect(await users.verifyCredentials("alice", "wrong password!!")).toEqual({ ok: false, reason: "wrong-password" });
      expect(await users.verifyCredentials("nobody", PW)).toEqual({ ok: false, reason: "unknown-user" });
      expect(await users.verifyCredentials("-x; rm -rf /", PW)).toEqual({ ok: false, reason: "unknown-user" });
      expect(await users.verifyCredentials("proxyonly", "")).toEqual({ ok: false, reason: "no-password" });
      await users.createUser({ username: "admin1", password: PW, role: "admin" });
      users.setDisabled("alice", true);
      expect(await users.verifyCredentials("alice", PW)).toEqual({ ok: false, reason: "disabled" });
      expect(await users.verifyCredentials("alice", "wrong password!!")).toEqual({ ok: false, reason: "wrong-password" });
    });

    it("rehashes a correct password stored with outdated parameters, without ending sessions", async () => {
      const u = await users.createUser({ username: "alice", password: PW, role: "viewer" });
      const old = await hash(PW, { memoryCost: 4096, timeCost: 1 });
      db.prepare("UPDATE users SET password_hash = ? WHERE id = ?").run(old, u.id);
      const sessions = new SessionStore(db, { clock: fake.clock });
      const { id } = sessions.createSession(u.id);
      expect((await users.verifyCredentials("alice", PW)).ok).toBe(true);
      const stored = (db.prepare("SELECT password_hash FROM users WHERE id = ?").get(u.id) as { password_hash: string }).password_hash;
      expect(stored).not.toBe(old);
      expect(stored).toMatch(/m=19456,t=2,p=1/);
      expect(sessions.validateSession(id).ok).toBe(true);
      expect((await users.verifyCredentials("alice", PW)).ok).toBe(true);
    });

    it("setPassword changes the password, stamps the time and ends every session", async () => {
      const u = await users.createUser({ username: "alice", password: PW, role: "viewer" });
      const sessions = new SessionStore(db, { clock: fake.clock });
      sessions.createSession(u.id);
      sessions.createSession(u.id);
      fake.advance(MINUTE);
      const changed = await users.setPassword("alice", "another long passphrase");
      expect(changed.passwordChangedAt).toBe(fake.now);
      expect(sessions.listSessions(u.id)).toEqual([]);
      expect((await users.verifyCredentials("alice", PW)).ok).toBe(false);
      expect((await users.verifyCredentials("alice", "another long passphrase")).ok).toBe(true);
      await expectAuthError(users.setPassword("alice", "alice"), "weak-password");
      await expectAuthError(users.setPassword("nobody", PW), "user-not-found");
    });

    it("changeOwnPassword needs the current password", async () => {
      const u = await users.createUser({ username: "alice", password: PW, role: "viewer" });
      await expectAuthError(users.changeOwnPassword(u.id, "not my password", "another long passphrase"), "wrong-password");
      expect((await users.verifyCredentials("alice", PW)).ok).toBe(true);
      await users.changeOwnPassword(u.id, PW, "another long passphrase");
      expect((await users.verifyCredentials("alice", "another long passphrase")).ok).toBe(true);
    });

    it("never leaves the panel without an enabled admin", async () => {
      await users.createUser({ username: "root1", password: PW, role: "admin" });
      expect(() => users.setDisabled("root1", true)).toThrow(/last enabled admin/);
      expect(() => users.updateUser("root1", { role: "viewer" })).toThrow(/last enabled admin/);
      await users.createUser({ username: "root2", password: PW, role: "admin" });
      users.setDisabled("root1", true);
      expect(users.countActiveAdmins()).toBe(1);
      expect(() => users.updateUser("root2", { role: "operator" })).toThrow(/last enabled admin/);
      users.setDisabled("root1", false);
      users.updateUser("root2", { role: "operator", unitPatterns: ["vllm-*"] });
      expect(users.getUser("root2")).toMatchObject({ role: "operator", unitPatterns: ["vllm-*"] });
    });

    it("updateUser validates and can clear unit patterns", async () => {
      await users.createUser({ username: "op", password: PW, role: "operator", unitPatterns: ["a-*"] });
      expect(() => users.updateUser("op", { unitPatterns: ["$(reboot)"] })).toThrow(AuthError);
      expect(users.updateUser("op", { unitPatterns: [] }).unitPatterns).toEqual([]);
      expect(() => users.updateUser("ghost", { role: "viewer" })).toThrow(/no user named/);
    });

    it("a corrupt unit_patterns column grants nothing", async () => {
      const u = await users.createUser({ username: "op", password: PW, role: "operator", unitPatterns: ["a-*"] });
      db.prepare("UPDATE users SET unit_patterns = 'not json' WHERE id = ?").run(u.id);
      expect(users.getUser("op")?.unitPatterns).toEqual([]);
    });
  });

  describe("first-run setup token", () => {
    it("is issued only while no enabled admin exists, and stored hashed", () => {
      const issued = users.ensureSetupToken();
      expect(issued).not.toBeNull();
      expect(issued!.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(issued!.expiresAt).toBe(fake.now + HOUR);
      const rows = db.prepare("SELECT token_hash FROM setup_tokens").all() as { token_hash: string }[];
      expect(rows).toEqual([{ token_hash: sha256Hex(issued!.token) }]);
      expect(JSON.stringify(db.prepare("SELECT * FROM setup_tokens").all())).not.toContain(issued!.token);
      expect(users.setupPending()).toBe(true);
      expect(users.checkSetupToken(issued!.token)).toBe(true);
    });

    it("creates the first admin once; a second use fails", async () => {
      const { token } = users.ensureSetupToken()!;
      const admin = await users.completeSetup(token, "root", PW);
      expect(admin).toMatchObject({ username: "root", role: "admin", disabled: false });
      expect(users.setupPending()).toBe(false);
      expect(users.checkSetupToken(token)).toBe(false);
      expect(db.prepare("SELECT COUNT(*) AS n FROM setup_tokens").get()).toEqual({ n: 0 });
      await expectAuthError(users.completeSetup(token, "mallory", PW), "invalid-setup-token");
      expect(users.getUser("mallory")).toBeNull();
      expect(users.ensureSetupToken()).toBeNull();
    });

    it("expires", async () => {
      const { token } = users.ensureSetupToken()!;
      fake.advance(HOUR);
      expect(users.checkSetupToken(token)).toBe(false);
      await expectAuthError(users.completeSetup(token, "root", PW), "invalid-setup-token");
      expect(users.countActiveAdmins()).toBe(0);
    });

    it("a new token voids the earlier one", async () => {
      const first = users.ensureSetupToken()!;
      const second = users.ensureSetupToken()!;
      expect(second.token).not.toBe(first.token);
      await expectAuthError(users.completeSetup(first.token, "root", PW), "invalid-setup-token");
      await users.completeSetup(second.token, "root", PW);
    });

    it("rejects forged and malformed tokens", async () => {
      users.ensureSetupToken();
      for (const forged of ["", "x", "A".repeat(43), "../../etc/passwd", "' OR 1=1 --"]) {
        expect(users.checkSetupToken(forged)).toBe(false);
        await expectAuthError(users.completeSetup(forged, "root", PW), "invalid-setup-token");
      }
    });

    it("does not consume the token when the password or name is refused", async () => {
      const { token } = users.ensureSetupToken()!;
      await expectAuthError(users.completeSetup(token, "root", "short"), "weak-password");
      await expectAuthError(users.completeSetup(token, "-root", PW), "invalid-username");
      expect(users.checkSetupToken(token)).toBe(true);
      await users.completeSetup(token, "root", PW);
    });

    it("is not issued when an admin was created another way (CLI)", async () => {
      const { token } = users.ensureSetupToken()!;
      await users.createUser({ username: "root", password: PW, role: "admin" });
      expect(users.checkSetupToken(token)).toBe(false);
      await expectAuthError(users.completeSetup(token, "second", PW), "invalid-setup-token");
      expect(users.ensureSetupToken()).toBeNull();
    });

    it("honours a configured lifetime", () => {
      const short = new UserStore(db, { clock: fake.clock, setupTokenTtlMs: 5 * MINUTE });
      const { token, expiresAt } = short.ensureSetupToken()!;
      expect(expiresAt).toBe(fake.now + 5 * MINUTE);
      fake.advance(5 * MINUTE - 1);
      expect(short.checkSetupToken(token)).toBe(true);
      fake.advance(1);
      expect(short.checkSetupToken(token)).toBe(false);
    });
  });
});
