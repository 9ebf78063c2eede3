import { hash } from "@node-rs/argon2";
import { beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../store/database";
import { fixedStore } from "../store/lazyStore";
import { testDatabasesForFile } from "../store/testing/databases";
import { sha256Hex } from "./crypto";
import { SessionStore } from "./sessions";
import { AuthError } from "./types";
import { UserStore } from "./users";
import { unitPatternProblem, usernameProblem } from "./userFields";
import { FakeClock, HOUR, MINUTE } from "./testHelpers";

const dbs = testDatabasesForFile("the user store");

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

describe.each(dbs.dialects)("UserStore on %s", (dialect) => {
  let store: Store;
  let fake: FakeClock;
  let users: UserStore;
  const passwordHash = async (id: number) =>
    (await store.db.selectFrom("users").select("password_hash").where("id", "=", id).executeTakeFirstOrThrow()).password_hash!;

  beforeEach(async () => {
    store = await (await dbs.fresh(dialect)).open();
    fake = new FakeClock();
    users = new UserStore(fixedStore(store), { clock: fake.clock });
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
      expect((await users.getUser("alice"))?.id).toBe(u.id);
      expect((await users.getUser("ALICE"))?.id).toBe(u.id);
      const stored = await passwordHash(u.id);
      expect(stored).toMatch(/^\$argon2id\$/);
      expect(stored).not.toContain(PW);
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
      expect(await users.listUsers()).toEqual([]);
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
      expect((await users.listUsers()).map((u) => u.username)).toEqual(["Amy", "bob", "zed"]);
      expect(await users.getUser("bob")).toMatchObject({ hasPassword: false, passwordChangedAt: null });
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
      await users.setDisabled("alice", true);
      expect(await users.verifyCredentials("alice", PW)).toEqual({ ok: false, reason: "disabled" });
      expect(await users.verifyCredentials("alice", "wrong password!!")).toEqual({ ok: false, reason: "wrong-password" });
    });

    it("rehashes a correct password stored with outdated parameters, without ending sessions", async () => {
      const u = await users.createUser({ username: "alice", password: PW, role: "viewer" });
      const old = await hash(PW, { memoryCost: 4096, timeCost: 1 });
      await store.db.updateTable("users").set({ password_hash: old }).where("id", "=", u.id).execute();
      const sessions = new SessionStore(fixedStore(store), { clock: fake.clock });
      const { id } = await sessions.createSession(u.id);
      expect((await users.verifyCredentials("alice", PW)).ok).toBe(true);
      const stored = await passwordHash(u.id);
      expect(stored).not.toBe(old);
      expect(stored).toMatch(/m=19456,t=2,p=1/);
      expect((await sessions.validateSession(id)).ok).toBe(true);
      expect((await users.verifyCredentials("alice", PW)).ok).toBe(true);
    });

    it("setPassword changes the password, stamps the time and ends every session", async () => {
      const u = await users.createUser({ username: "alice", password: PW, role: "viewer" });
      const sessions = new SessionStore(fixedStore(store), { clock: fake.clock });
      await sessions.createSession(u.id);
      await sessions.createSession(u.id);
      fake.advance(MINUTE);
      const changed = await users.setPassword("alice", "another long passphrase");
      expect(changed.passwordChangedAt).toBe(fake.now);
      expect(await sessions.listSessions(u.id)).toEqual([]);
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
      await expect(users.setDisabled("root1", true)).rejects.toThrow(/last enabled admin/);
      await expect(users.updateUser("root1", { role: "viewer" })).rejects.toThrow(/last enabled admin/);
      await users.createUser({ username: "root2", password: PW, role: "admin" });
      await users.setDisabled("root1", true);
      expect(await users.countActiveAdmins()).toBe(1);
      await expect(users.updateUser("root2", { role: "operator" })).rejects.toThrow(/last enabled admin/);
      await users.setDisabled("root1", false);
      await users.updateUser("root2", { role: "operator", unitPatterns: ["vllm-*"] });
      expect(await users.getUser("root2")).toMatchObject({ role: "operator", unitPatterns: ["vllm-*"] });
    });

    it("updateUser validates and can clear unit patterns", async () => {
      await users.createUser({ username: "op", password: PW, role: "operator", unitPatterns: ["a-*"] });
      await expect(users.updateUser("op", { unitPatterns: ["$(reboot)"] })).rejects.toThrow(AuthError);
      expect((await users.updateUser("op", { unitPatterns: [] })).unitPatterns).toEqual([]);
      await expect(users.updateUser("ghost", { role: "viewer" })).rejects.toThrow(/no user named/);
    });

    it("a corrupt unit_patterns column grants nothing", async () => {
      const u = await users.createUser({ username: "op", password: PW, role: "operator", unitPatterns: ["a-*"] });
      await store.db.updateTable("users").set({ unit_patterns: "not json" }).where("id", "=", u.id).execute();
      expect((await users.getUser("op"))?.unitPatterns).toEqual([]);
    });
  });

  describe("first-run setup token", () => {
    it("is issued only while no enabled admin exists, and stored hashed", async () => {
      const issued = await users.ensureSetupToken();
      expect(issued).not.toBeNull();
      expect(issued!.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(issued!.expiresAt).toBe(fake.now + HOUR);
      const rows = await store.db.selectFrom("setup_tokens").select("token_hash").execute();
      expect(rows).toEqual([{ token_hash: sha256Hex(issued!.token) }]);
      expect(JSON.stringify(await store.db.selectFrom("setup_tokens").selectAll().execute())).not.toContain(issued!.token);
      expect(await users.setupPending()).toBe(true);
      expect(await users.checkSetupToken(issued!.token)).toBe(true);
    });

    it("creates the first admin once; a second use fails", async () => {
      const { token } = (await users.ensureSetupToken())!;
      const admin = await users.completeSetup(token, "root", PW);
      expect(admin).toMatchObject({ username: "root", role: "admin", disabled: false });
      expect(await users.setupPending()).toBe(false);
      expect(await users.checkSetupToken(token)).toBe(false);
      expect(await store.db.selectFrom("setup_tokens").selectAll().execute()).toEqual([]);
      await expectAuthError(users.completeSetup(token, "mallory", PW), "invalid-setup-token");
      expect(await users.getUser("mallory")).toBeNull();
      expect(await users.ensureSetupToken()).toBeNull();
    });

    it("expires", async () => {
      const { token } = (await users.ensureSetupToken())!;
      fake.advance(HOUR);
      expect(await users.checkSetupToken(token)).toBe(false);
      await expectAuthError(users.completeSetup(token, "root", PW), "invalid-setup-token");
      expect(await users.countActiveAdmins()).toBe(0);
    });

    it("a new token voids the earlier one", async () => {
      const first = (await users.ensureSetupToken())!;
      const second = (await users.ensureSetupToken())!;
      expect(second.token).not.toBe(first.token);
      await expectAuthError(users.completeSetup(first.token, "root", PW), "invalid-setup-token");
      await users.completeSetup(second.token, "root", PW);
    });

    it("rejects forged and malformed tokens", async () => {
      await users.ensureSetupToken();
      for (const forged of ["", "x", "A".repeat(43), "../../etc/passwd", "' OR 1=1 --"]) {
        expect(await users.checkSetupToken(forged)).toBe(false);
        await expectAuthError(users.completeSetup(forged, "root", PW), "invalid-setup-token");
      }
    });

    it("does not consume the token when the password or name is refused", async () => {
      const { token } = (await users.ensureSetupToken())!;
      await expectAuthError(users.completeSetup(token, "root", "short"), "weak-password");
      await expectAuthError(users.completeSetup(token, "-root", PW), "invalid-username");
      expect(await users.checkSetupToken(token)).toBe(true);
      await users.completeSetup(token, "root", PW);
    });

    it("is not issued when an admin was created another way (CLI)", async () => {
      const { token } = (await users.ensureSetupToken())!;
      await users.createUser({ username: "root", password: PW, role: "admin" });
      expect(await users.checkSetupToken(token)).toBe(false);
      await expectAuthError(users.completeSetup(token, "second", PW), "invalid-setup-token");
      expect(await users.ensureSetupToken()).toBeNull();
    });

    it("honours a configured lifetime", async () => {
      const short = new UserStore(fixedStore(store), { clock: fake.clock, setupTokenTtlMs: 5 * MINUTE });
      const { token, expiresAt } = (await short.ensureSetupToken())!;
      expect(expiresAt).toBe(fake.now + 5 * MINUTE);
      fake.advance(5 * MINUTE - 1);
      expect(await short.checkSetupToken(token)).toBe(true);
      fake.advance(1);
      expect(await short.checkSetupToken(token)).toBe(false);
    });
  });

  // PostgreSQL only: two SQLite handles in one process block each other's thread (better-sqlite3 is
  // synchronous); SQLite's other process is the CLI, tested across processes in cli.test.ts
  describe.runIf(dialect === "postgres")("two replicas on one database", () => {
    it("two admins demoting each other at once still leave one admin", async () => {
      const tdb = await dbs.fresh(dialect);
      const [a, b] = await Promise.all([tdb.open(), tdb.open()]);
      const ua = new UserStore(fixedStore(a), { clock: fake.clock });
      const ub = new UserStore(fixedStore(b), { clock: fake.clock });
      await ua.createUser({ username: "root1", password: null, role: "admin" });
      await ua.createUser({ username: "root2", password: null, role: "admin" });
      const results = await Promise.allSettled([ua.updateUser("root1", { role: "viewer" }), ub.updateUser("root2", { role: "viewer" })]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect(results.find((r) => r.status === "rejected")).toMatchObject({ reason: { code: "last-admin" } });
      expect(await ub.countActiveAdmins()).toBe(1);
    });

    it("a user created through one store is seen at once through the other, and a name taken on both is refused once", async () => {
      const tdb = await dbs.fresh(dialect);
      const [a, b] = await Promise.all([tdb.open(), tdb.open()]);
      const ua = new UserStore(fixedStore(a), { clock: fake.clock });
      const ub = new UserStore(fixedStore(b), { clock: fake.clock });
      const results = await Promise.allSettled([
        ua.createUser({ username: "Carol", password: null, role: "viewer" }),
        ub.createUser({ username: "carol", password: null, role: "viewer" }),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect(results.find((r) => r.status === "rejected")).toMatchObject({ reason: { code: "user-exists" } });
      expect((await ub.listUsers()).map((u) => u.username.toLowerCase())).toEqual(["carol"]);
    });
  });
});
