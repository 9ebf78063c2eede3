import { beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../store/database";
import { fixedStore } from "../store/lazyStore";
import { testDatabasesForFile } from "../store/testing/databases";
import { sha256Hex } from "./crypto";
import { clearSessionCookie, DEFAULT_SESSION_POLICY, sessionCookie, sessionCookieName, sessionIdFromCookieHeader, SessionStore } from "./sessions";
import { UserStore } from "./users";
import { DAY, FakeClock, HOUR, MINUTE } from "./testHelpers";
import type { User } from "./types";

const PW = "correct horse battery staple";
const dbs = testDatabasesForFile("the session store");

describe.each(dbs.dialects)("SessionStore on %s", (dialect) => {
  let store: Store;
  let fake: FakeClock;
  let users: UserStore;
  let sessions: SessionStore;
  let alice: User;

  beforeEach(async () => {
    store = await (await dbs.fresh(dialect)).open();
    fake = new FakeClock();
    users = new UserStore(fixedStore(store), { clock: fake.clock });
    sessions = new SessionStore(fixedStore(store), { clock: fake.clock });
    alice = await users.createUser({ username: "alice", password: PW, role: "operator", unitPatterns: ["vllm-*"] });
    await users.createUser({ username: "root", password: PW, role: "admin" });
  });

  it("defaults to 12 h idle and 7 d absolute", async () => {
    expect(DEFAULT_SESSION_POLICY.idleTimeoutMs).toBe(12 * HOUR);
    expect(DEFAULT_SESSION_POLICY.absoluteLifetimeMs).toBe(7 * DAY);
  });

  it("creates a random 256-bit id, stores only its hash, and validates it", async () => {
    const { id, session } = await sessions.createSession(alice.id, { sourceAddr: "10.0.0.5", userAgent: "test" });
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(session.idHash).toBe(sha256Hex(id));
    const dump = JSON.stringify(await store.db.selectFrom("sessions").selectAll().execute());
    expect(dump).not.toContain(id);
    expect(dump).toContain(sha256Hex(id));
    const check = await sessions.validateSession(id);
    expect(check).toMatchObject({ ok: true, user: { id: alice.id, username: "alice", role: "operator", unitPatterns: ["vllm-*"] } });
    if (check.ok) {
      expect(check.session).toMatchObject({ sourceAddr: "10.0.0.5", userAgent: "test", expiresAt: fake.now + 7 * DAY, idleExpiresAt: fake.now + 12 * HOUR });
    }
    expect((await sessions.createSession(alice.id)).id).not.toBe(id);
  });

  it("refuses missing, malformed and unknown ids", async () => {
    expect(await sessions.validateSession(undefined)).toEqual({ ok: false, user: null, reason: "missing" });
    expect(await sessions.validateSession("")).toEqual({ ok: false, user: null, reason: "missing" });
    expect(await sessions.validateSession("abc")).toMatchObject({ ok: false, reason: "malformed" });
    expect(await sessions.validateSession("' OR '1'='1")).toMatchObject({ ok: false, reason: "malformed" });
    expect(await sessions.validateSession("A".repeat(43))).toMatchObject({ ok: false, reason: "unknown" });
    // The stored hash is not a credential.
    const { id } = await sessions.createSession(alice.id);
    expect(await sessions.validateSession(sha256Hex(id))).toMatchObject({ ok: false });
  });

  it("ends a session after the idle timeout", async () => {
    const { id } = await sessions.createSession(alice.id);
    fake.advance(12 * HOUR - 1);
    expect((await sessions.validateSession(id)).ok).toBe(true);
    fake.advance(12 * HOUR);
    expect(await sessions.validateSession(id)).toMatchObject({ ok: false, reason: "idle-timeout" });
    // and it is gone for good
    expect(await sessions.validateSession(id)).toMatchObject({ ok: false, reason: "unknown" });
  });

  it("a check with touch: false (a live stream, a background poll) does not keep it alive", async () => {
    const { id } = await sessions.createSession(alice.id);
    for (let i = 0; i < 11; i++) {
      fake.advance(HOUR);
      expect((await sessions.validateSession(id, { touch: false })).ok).toBe(true);
    }
    fake.advance(HOUR);
    expect(await sessions.validateSession(id, { touch: false })).toMatchObject({ ok: false, reason: "idle-timeout" });
  });

  it("use keeps a session alive (touches last-seen)", async () => {
    const { id } = await sessions.createSession(alice.id);
    for (let i = 0; i < 10; i++) {
      fake.advance(11 * HOUR);
      expect((await sessions.validateSession(id)).ok).toBe(true);
    }
  });

  it("writes last-seen at most once per touch interval", async () => {
    const { id, session } = await sessions.createSession(alice.id);
    fake.advance(30_000);
    await sessions.validateSession(id);
    expect((await sessions.listSessions(alice.id))[0]!.lastSeenAt).toBe(session.createdAt);
    fake.advance(30_000);
    await sessions.validateSession(id);
    expect((await sessions.listSessions(alice.id))[0]!.lastSeenAt).toBe(fake.now);
  });

  it("ends a session at its absolute lifetime even while in use", async () => {
    const { id } = await sessions.createSession(alice.id);
    for (let elapsed = 0; elapsed < 7 * DAY - HOUR; elapsed += HOUR) {
      fake.advance(HOUR);
      expect((await sessions.validateSession(id)).ok).toBe(true);
    }
    fake.advance(HOUR);
    expect(await sessions.validateSession(id)).toMatchObject({ ok: false, reason: "expired" });
  });

  it("honours a configured policy", async () => {
    const short = new SessionStore(fixedStore(store), {
      clock: fake.clock,
      policy: { idleTimeoutMs: 5 * MINUTE, absoluteLifetimeMs: HOUR, touchIntervalMs: 0 },
    });
    const { id } = await short.createSession(alice.id);
    fake.advance(4 * MINUTE);
    expect((await short.validateSession(id)).ok).toBe(true);
    fake.advance(5 * MINUTE);
    expect(await short.validateSession(id)).toMatchObject({ ok: false, reason: "idle-timeout" });
  });

  it("logout ends only that session", async () => {
    const a = await sessions.createSession(alice.id);
    const b = await sessions.createSession(alice.id);
    expect(await sessions.endSession(a.id)).toBe(true);
    expect(await sessions.endSession(a.id)).toBe(false);
    expect(await sessions.endSession("garbage")).toBe(false);
    expect(await sessions.validateSession(a.id)).toMatchObject({ ok: false, reason: "unknown" });
    expect((await sessions.validateSession(b.id)).ok).toBe(true);
  });

  it("a password change ends every session of that user and no one else's", async () => {
    const a = await sessions.createSession(alice.id);
    const b = await sessions.createSession(alice.id);
    const rootSession = await sessions.createSession((await users.getUser("root"))!.id);
    fake.advance(MINUTE);
    await users.setPassword("alice", "a brand new passphrase");
    expect((await sessions.validateSession(a.id)).ok).toBe(false);
    expect((await sessions.validateSession(b.id)).ok).toBe(false);
    expect((await sessions.validateSession(rootSession.id)).ok).toBe(true);
    const fresh = await sessions.createSession(alice.id);
    expect((await sessions.validateSession(fresh.id)).ok).toBe(true);
  });

  it("refuses a session older than the last password change even if its row survived", async () => {
    const a = await sessions.createSession(alice.id);
    fake.advance(MINUTE);
    // Simulate a row that escaped deletion (e.g. restored backup).
    await store.db.updateTable("users").set({ password_changed_at: fake.now }).where("id", "=", alice.id).execute();
    expect(await sessions.validateSession(a.id)).toMatchObject({ ok: false, reason: "password-changed" });
  });

  it("disabling a user ends their sessions; re-enabling does not revive them", async () => {
    const a = await sessions.createSession(alice.id);
    await users.setDisabled("alice", true);
    expect(await sessions.listSessions(alice.id)).toEqual([]);
    expect((await sessions.validateSession(a.id)).ok).toBe(false);
    await users.setDisabled("alice", false);
    expect((await sessions.validateSession(a.id)).ok).toBe(false);
  });

  it("refuses a session of a user disabled behind its back", async () => {
    const a = await sessions.createSession(alice.id);
    await store.db.updateTable("users").set({ disabled: 1 }).where("id", "=", alice.id).execute();
    expect(await sessions.validateSession(a.id)).toMatchObject({ ok: false, reason: "user-disabled" });
  });

  it("role and unit changes apply to existing sessions at once", async () => {
    const a = await sessions.createSession(alice.id);
    await users.updateUser("alice", { role: "viewer", unitPatterns: [] });
    expect(await sessions.validateSession(a.id)).toMatchObject({ ok: true, user: { role: "viewer", unitPatterns: [] } });
  });

  it("endAllSessions and pruneExpiredSessions", async () => {
    await sessions.createSession(alice.id);
    await sessions.createSession(alice.id);
    expect(await sessions.endAllSessions(alice.id)).toBe(2);
    await sessions.createSession(alice.id);
    fake.advance(6 * HOUR);
    const live = await sessions.createSession(alice.id);
    fake.advance(6 * HOUR);
    expect(await sessions.pruneExpiredSessions()).toBe(1);
    expect((await sessions.listSessions(alice.id)).map((s) => s.idHash)).toEqual([live.session.idHash]);
    expect(await sessions.endSessionByHash(live.session.idHash)).toBe(true);
  });
});

describe("session cookies", () => {
  const id = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ";

  it("sets HttpOnly, SameSite=Strict, Path=/ and no Secure over http", async () => {
    const c = sessionCookie(id, { secure: false });
    expect(c).toBe(`gpudeck_session=${id}; Path=/; HttpOnly; SameSite=Strict`);
  });

  it("adds Secure and the __Host- prefix over https, and Max-Age when asked", async () => {
    const c = sessionCookie(id, { secure: true, maxAgeMs: 7 * DAY });
    expect(c).toBe(`__Host-gpudeck_session=${id}; Max-Age=604800; Path=/; HttpOnly; SameSite=Strict; Secure`);
    expect(c).not.toMatch(/Domain=/i);
  });

  it("clears with the same attributes", async () => {
    expect(clearSessionCookie({ secure: true })).toMatch(
      /^__Host-gpudeck_session=; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=\/; HttpOnly; SameSite=Strict; Secure$/,
    );
    expect(clearSessionCookie({ secure: false })).toMatch(/^gpudeck_session=; Max-Age=0;.*HttpOnly; SameSite=Strict$/);
  });

  it("refuses to put anything but a session id into the header", async () => {
    expect(() => sessionCookie("x\r\nSet-Cookie: evil=1", { secure: false })).toThrow();
    expect(() => sessionCookie("", { secure: false })).toThrow();
  });

  it("reads the id back from a Cookie header", async () => {
    expect(sessionIdFromCookieHeader(`theme=dark; gpudeck_session=${id}; other=1`, { secure: false })).toBe(id);
    expect(sessionIdFromCookieHeader(`__Host-gpudeck_session=${id}`, { secure: true })).toBe(id);
    expect(sessionCookieName({ secure: true })).toBe("__Host-gpudeck_session");
  });

  it("ignores the other variant, malformed values and planted duplicates", async () => {
    expect(sessionIdFromCookieHeader(`gpudeck_session=${id}`, { secure: true })).toBeNull();
    expect(sessionIdFromCookieHeader(`__Host-gpudeck_session=${id}`, { secure: false })).toBeNull();
    expect(sessionIdFromCookieHeader("gpudeck_session=short", { secure: false })).toBeNull();
    expect(sessionIdFromCookieHeader(`gpudeck_session=${id}; gpudeck_session=${id.replace("a", "b")}`, { secure: false })).toBeNull();
    expect(sessionIdFromCookieHeader(null, { secure: false })).toBeNull();
    expect(sessionIdFromCookieHeader("", { secure: false })).toBeNull();
    expect(sessionIdFromCookieHeader(`x=${"y".repeat(20000)}; gpudeck_session=${id}`, { secure: false })).toBeNull();
  });
});
