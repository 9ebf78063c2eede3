import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openPanelDb, type PanelDb } from "./db";
import { sha256Hex } from "./crypto";
import { clearSessionCookie, DEFAULT_SESSION_POLICY, sessionCookie, sessionCookieName, sessionIdFromCookieHeader, SessionStore } from "./sessions";
import { UserStore } from "./users";
import { DAY, FakeClock, HOUR, MINUTE, tempDataDir } from "./testHelpers";
import type { User } from "./types";

const PW = "correct horse battery staple";

describe("SessionStore", () => {
  let tmp: ReturnType<typeof tempDataDir>;
  let db: PanelDb;
  let fake: FakeClock;
  let users: UserStore;
  let sessions: SessionStore;
  let alice: User;

  beforeEach(async () => {
    tmp = tempDataDir();
    db = openPanelDb(tmp.dir);
    fake = new FakeClock();
    users = new UserStore(db, { clock: fake.clock });
    sessions = new SessionStore(db, { clock: fake.clock });
    alice = await users.createUser({ username: "alice", password: PW, role: "operator", unitPatterns: ["vllm-*"] });
    await users.createUser({ username: "root", password: PW, role: "admin" });
  });
  afterEach(() => {
    db.close();
    tmp.cleanup();
  });

  it("defaults to 12 h idle and 7 d absolute", () => {
    expect(DEFAULT_SESSION_POLICY.idleTimeoutMs).toBe(12 * HOUR);
    expect(DEFAULT_SESSION_POLICY.absoluteLifetimeMs).toBe(7 * DAY);
  });

  it("creates a random 256-bit id, stores only its hash, and validates it", () => {
    const { id, session } = sessions.createSession(alice.id, { sourceAddr: "10.0.0.5", userAgent: "test" });
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(session.idHash).toBe(sha256Hex(id));
    const dump = JSON.stringify(db.prepare("SELECT * FROM sessions").all());
    expect(dump).not.toContain(id);
    expect(dump).toContain(sha256Hex(id));
    const check = sessions.validateSession(id);
    expect(check).toMatchObject({ ok: true, user: { id: alice.id, username: "alice", role: "operator", unitPatterns: ["vllm-*"] } });
    if (check.ok) {
      expect(check.session).toMatchObject({ sourceAddr: "10.0.0.5", userAgent: "test", expiresAt: fake.now + 7 * DAY, idleExpiresAt: fake.now + 12 * HOUR });
    }
    expect(sessions.createSession(alice.id).id).not.toBe(id);
  });

  it("refuses missing, malformed and unknown ids", () => {
    expect(sessions.validateSession(undefined)).toEqual({ ok: false, user: null, reason: "missing" });
    expect(sessions.validateSession("")).toEqual({ ok: false, user: null, reason: "missing" });
    expect(sessions.validateSession("abc")).toMatchObject({ ok: false, reason: "malformed" });
    expect(sessions.validateSession("' OR '1'='1")).toMatchObject({ ok: false, reason: "malformed" });
    expect(sessions.validateSession("A".repeat(43))).toMatchObject({ ok: false, reason: "unknown" });
    // The stored hash is not a credential.
    const { id } = sessions.createSession(alice.id);
    expect(sessions.validateSession(sha256Hex(id))).toMatchObject({ ok: false });
  });

  it("ends a session after the idle timeout", () => {
    const { id } = sessions.createSession(alice.id);
    fake.advance(12 * HOUR - 1);
    expect(sessions.validateSession(id).ok).toBe(true);
    fake.advance(12 * HOUR);
    expect(sessions.validateSession(id)).toMatchObject({ ok: false, reason: "idle-timeout" });
    // and it is gone for good
    expect(sessions.validateSession(id)).toMatchObject({ ok: false, reason: "unknown" });
  });

  it("a check with touch: false (a live stream, a background poll) does not keep it alive", () => {
    const { id } = sessions.createSession(alice.id);
    for (let i = 0; i < 11; i++) {
      fake.advance(HOUR);
      expect(sessions.validateSession(id, { touch: false }).ok).toBe(true);
    }
    fake.advance(HOUR);
    expect(sessions.validateSession(id, { touch: false })).toMatchObject({ ok: false, reason: "idle-timeout" });
  });

  it("use keeps a session alive (touches last-seen)", () => {
    const { id } = sessions.createSession(alice.id);
    for (let i = 0; i < 10; i++) {
      fake.advance(11 * HOUR);
      expect(sessions.validateSession(id).ok).toBe(true);
    }
  });

  it("writes last-seen at most once per touch interval", () => {
    const { id, session } = sessions.createSession(alice.id);
    fake.advance(30_000);
    sessions.validateSession(id);
    expect(sessions.listSessions(alice.id)[0]!.lastSeenAt).toBe(session.createdAt);
    fake.advance(30_000);
    sessions.validateSession(id);
    expect(sessions.listSessions(alice.id)[0]!.lastSeenAt).toBe(fake.now);
  });

  it("ends a session at its absolute lifetime even while in use", () => {
    const { id } = sessions.createSession(alice.id);
    for (let elapsed = 0; elapsed < 7 * DAY - HOUR; elapsed += HOUR) {
      fake.advance(HOUR);
      expect(sessions.validateSession(id).ok).toBe(true);
    }
    fake.advance(HOUR);
    expect(sessions.validateSession(id)).toMatchObject({ ok: false, reason: "expired" });
  });

  it("honours a configured policy", () => {
    const short = new SessionStore(db, { clock: fake.clock, policy: { idleTimeoutMs: 5 * MINUTE, absoluteLifetimeMs: HOUR, touchIntervalMs: 0 } });
    const { id } = short.createSession(alice.id);
    fake.advance(4 * MINUTE);
    expect(short.validateSession(id).ok).toBe(true);
    fake.advance(5 * MINUTE);
    expect(short.validateSession(id)).toMatchObject({ ok: false, reason: "idle-timeout" });
  });

  it("logout ends only that session", () => {
    const a = sessions.createSession(alice.id);
    const b = sessions.createSession(alice.id);
    expect(sessions.endSession(a.id)).toBe(true);
    expect(sessions.endSession(a.id)).toBe(false);
    expect(sessions.endSession("garbage")).toBe(false);
    expect(sessions.validateSession(a.id)).toMatchObject({ ok: false, reason: "unknown" });
    expect(sessions.validateSession(b.id).ok).toBe(true);
  });

  it("a password change ends every session of that user and no one else's", async () => {
    const a = sessions.createSession(alice.id);
    const b = sessions.createSession(alice.id);
    const rootSession = sessions.createSession(users.getUser("root")!.id);
    fake.advance(MINUTE);
    await users.setPassword("alice", "a brand new passphrase");
    expect(sessions.validateSession(a.id).ok).toBe(false);
    expect(sessions.validateSession(b.id).ok).toBe(false);
    expect(sessions.validateSession(rootSession.id).ok).toBe(true);
    const fresh = sessions.createSession(alice.id);
    expect(sessions.validateSession(fresh.id).ok).toBe(true);
  });

  it("refuses a session older than the last password change even if its row survived", async () => {
    const a = sessions.createSession(alice.id);
    fake.advance(MINUTE);
    // Simulate a row that escaped deletion (e.g. restored backup).
    db.prepare("UPDATE users SET password_changed_at = ? WHERE id = ?").run(fake.now, alice.id);
    expect(sessions.validateSession(a.id)).toMatchObject({ ok: false, reason: "password-changed" });
  });

  it("disabling a user ends their sessions; re-enabling does not revive them", () => {
    const a = sessions.createSession(alice.id);
    users.setDisabled("alice", true);
    expect(sessions.listSessions(alice.id)).toEqual([]);
    expect(sessions.validateSession(a.id).ok).toBe(false);
    users.setDisabled("alice", false);
    expect(sessions.validateSession(a.id).ok).toBe(false);
  });

  it("refuses a session of a user disabled behind its back", () => {
    const a = sessions.createSession(alice.id);
    db.prepare("UPDATE users SET disabled = 1 WHERE id = ?").run(alice.id);
    expect(sessions.validateSession(a.id)).toMatchObject({ ok: false, reason: "user-disabled" });
  });

  it("role and unit changes apply to existing sessions at once", () => {
    const a = sessions.createSession(alice.id);
    users.updateUser("alice", { role: "viewer", unitPatterns: [] });
    expect(sessions.validateSession(a.id)).toMatchObject({ ok: true, user: { role: "viewer", unitPatterns: [] } });
  });

  it("endAllSessions and pruneExpiredSessions", () => {
    sessions.createSession(alice.id);
    sessions.createSession(alice.id);
    expect(sessions.endAllSessions(alice.id)).toBe(2);
    sessions.createSession(alice.id);
    fake.advance(6 * HOUR);
    const live = sessions.createSession(alice.id);
    fake.advance(6 * HOUR);
    expect(sessions.pruneExpiredSessions()).toBe(1);
    expect(sessions.listSessions(alice.id).map((s) => s.idHash)).toEqual([live.session.idHash]);
    expect(sessions.endSessionByHash(live.session.idHash)).toBe(true);
  });
});

describe("session cookies", () => {
  const id = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ";

  it("sets HttpOnly, SameSite=Strict, Path=/ and no Secure over http", () => {
    const c = sessionCookie(id, { secure: false });
    expect(c).toBe(`gpudeck_session=${id}; Path=/; HttpOnly; SameSite=Strict`);
  });

  it("adds Secure and the __Host- prefix over https, and Max-Age when asked", () => {
    const c = sessionCookie(id, { secure: true, maxAgeMs: 7 * DAY });
    expect(c).toBe(`__Host-gpudeck_session=${id}; Max-Age=604800; Path=/; HttpOnly; SameSite=Strict; Secure`);
    expect(c).not.toMatch(/Domain=/i);
  });

  it("clears with the same attributes", () => {
    expect(clearSessionCookie({ secure: true })).toMatch(
      /^__Host-gpudeck_session=; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=\/; HttpOnly; SameSite=Strict; Secure$/,
    );
    expect(clearSessionCookie({ secure: false })).toMatch(/^gpudeck_session=; Max-Age=0;.*HttpOnly; SameSite=Strict$/);
  });

  it("refuses to put anything but a session id into the header", () => {
    expect(() => sessionCookie("x\r\nSet-Cookie: evil=1", { secure: false })).toThrow();
    expect(() => sessionCookie("", { secure: false })).toThrow();
  });

  it("reads the id back from a Cookie header", () => {
    expect(sessionIdFromCookieHeader(`theme=dark; gpudeck_session=${id}; other=1`, { secure: false })).toBe(id);
    expect(sessionIdFromCookieHeader(`__Host-gpudeck_session=${id}`, { secure: true })).toBe(id);
    expect(sessionCookieName({ secure: true })).toBe("__Host-gpudeck_session");
  });

  it("ignores the other variant, malformed values and planted duplicates", () => {
    expect(sessionIdFromCookieHeader(`gpudeck_session=${id}`, { secure: true })).toBeNull();
    expect(sessionIdFromCookieHeader(`__Host-gpudeck_session=${id}`, { secure: false })).toBeNull();
    expect(sessionIdFromCookieHeader("gpudeck_session=short", { secure: false })).toBeNull();
    expect(sessionIdFromCookieHeader(`gpudeck_session=${id}; gpudeck_session=${id.replace("a", "b")}`, { secure: false })).toBeNull();
    expect(sessionIdFromCookieHeader(null, { secure: false })).toBeNull();
    expect(sessionIdFromCookieHeader("", { secure: false })).toBeNull();
    expect(sessionIdFromCookieHeader(`x=${"y".repeat(20000)}; gpudeck_session=${id}`, { secure: false })).toBeNull();
  });
});
