/**
 * Login sessions: random 256-bit ids handed to the browser in an httpOnly cookie; the database
 * keeps only their SHA-256, so a copy of panel.db cannot be replayed as a cookie.
 */
import type { PanelDb } from "./db";
import { randomToken, sha256Hex, TOKEN_RE } from "./crypto";
import { isRole } from "../contract/actors";
import { systemClock, type Clock, type Ms, type User } from "./types";

export interface SessionPolicy {
  /** Ends a session nobody used for this long. Default 12 h. */
  idleTimeoutMs: Ms;
  /** Ends a session this long after sign-in, used or not. Default 7 days. */
  absoluteLifetimeMs: Ms;
  /**
   * last_seen is written at most this often per session (one write per request would be waste).
   * The idle timeout can therefore end a session up to this much early. Default 60 s.
   */
  touchIntervalMs: Ms;
}

export const DEFAULT_SESSION_POLICY: Readonly<SessionPolicy> = Object.freeze({
  idleTimeoutMs: 12 * 60 * 60 * 1000,
  absoluteLifetimeMs: 7 * 24 * 60 * 60 * 1000,
  touchIntervalMs: 60 * 1000,
});

export interface SessionInfo {
  /** SHA-256 of the id; safe to log, show, or use as a key ("sign out that device"). */
  idHash: string;
  userId: number;
  createdAt: Ms;
  lastSeenAt: Ms;
  /** When the idle timeout will end it unless used again. */
  idleExpiresAt: Ms;
  /** When the absolute lifetime ends it. */
  expiresAt: Ms;
  sourceAddr: string | null;
  userAgent: string | null;
}

export type SessionRefusal = "missing" | "malformed" | "unknown" | "idle-timeout" | "expired" | "user-disabled" | "password-changed";

export type SessionCheck = { ok: true; user: User; session: SessionInfo } | { ok: false; user: null; reason: SessionRefusal };

interface SessionJoinRow {
  id_hash: string;
  user_id: number;
  created_at: number;
  last_seen_at: number;
  source_addr: string | null;
  user_agent: string | null;
  username: string;
  password_hash: string | null;
  role: string;
  unit_patterns: string;
  disabled: number;
  u_created_at: number;
  password_changed_at: number | null;
}

const META_MAX = 512;
function clip(value: string | null | undefined): string | null {
  return typeof value === "string" ? value.slice(0, META_MAX) : null;
}

function parsePatterns(json: string): string[] {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? value.filter((p): p is string => typeof p === "string") : [];
  } catch {
    return [];
  }
}

export class SessionStore {
  readonly policy: Readonly<SessionPolicy>;
  private readonly clock: Clock;

  constructor(
    private readonly db: PanelDb,
    options: { clock?: Clock; policy?: Partial<SessionPolicy> } = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.policy = Object.freeze({ ...DEFAULT_SESSION_POLICY, ...options.policy });
  }

  private info(row: {
    id_hash: string;
    user_id: number;
    created_at: number;
    last_seen_at: number;
    source_addr: string | null;
    user_agent: string | null;
  }): SessionInfo {
    return {
      idHash: row.id_hash,
      userId: row.user_id,
      createdAt: row.created_at,
      lastSeenAt: row.last_seen_at,
      idleExpiresAt: row.last_seen_at + this.policy.idleTimeoutMs,
      expiresAt: row.created_at + this.policy.absoluteLifetimeMs,
      sourceAddr: row.source_addr,
      userAgent: row.user_agent,
    };
  }

  /** Start a session; the returned `id` goes into the cookie and is never stored. */
  createSession(userId: number, meta: { sourceAddr?: string | null; userAgent?: string | null } = {}): { id: string; session: SessionInfo } {
    const id = randomToken();
    const idHash = sha256Hex(id);
    const now = this.clock();
    this.db
      .prepare("INSERT INTO sessions (id_hash, user_id, created_at, last_seen_at, source_addr, user_agent) VALUES (?, ?, ?, ?, ?, ?)")
      .run(idHash, userId, now, now, clip(meta.sourceAddr), clip(meta.userAgent));
    return {
      id,
      session: this.info({
        id_hash: idHash,
        user_id: userId,
        created_at: now,
        last_seen_at: now,
        source_addr: clip(meta.sourceAddr),
        user_agent: clip(meta.userAgent),
      }),
    };
  }

  /**
   * Look up a session id from a cookie. Valid: touches last-seen (unless `touch: false`: a check
   * that is not the person doing something, such as an open live stream re-checking, must not keep
   * the session from idling out) and returns the user as stored now (so role, pattern and disable
   * changes apply at once). Invalid: says why, and deletes sessions that are over.
   */
  validateSession(id: string | null | undefined, options: { touch?: boolean } = {}): SessionCheck {
    if (id === null || id === undefined || id === "") return { ok: false, user: null, reason: "missing" };
    if (typeof id !== "string" || !TOKEN_RE.test(id)) return { ok: false, user: null, reason: "malformed" };
    const idHash = sha256Hex(id);
    const row = this.db
      .prepare(
        `SELECT s.id_hash, s.user_id, s.created_at, s.last_seen_at, s.source_addr, s.user_agent,
                u.username, u.password_hash, u.role, u.unit_patterns, u.disabled,
                u.created_at AS u_created_at, u.password_changed_at
         FROM sessions s JOIN users u ON u.id = s.user_id
         WHERE s.id_hash = ?`,
      )
      .get(idHash) as SessionJoinRow | undefined;
    if (!row) return { ok: false, user: null, reason: "unknown" };
    const now = this.clock();
    const refuse = (reason: SessionRefusal): SessionCheck => {
      this.db.prepare("DELETE FROM sessions WHERE id_hash = ?").run(idHash);
      return { ok: false, user: null, reason };
    };
    if (row.disabled === 1) return refuse("user-disabled");
    // Belt and braces: a password change deletes the user's sessions, but never honour one older.
    if (row.password_changed_at !== null && row.created_at < row.password_changed_at) return refuse("password-changed");
    if (now >= row.created_at + this.policy.absoluteLifetimeMs) return refuse("expired");
    if (now >= row.last_seen_at + this.policy.idleTimeoutMs) return refuse("idle-timeout");
    let lastSeen = row.last_seen_at;
    if (options.touch !== false && now - row.last_seen_at >= this.policy.touchIntervalMs) {
      this.db.prepare("UPDATE sessions SET last_seen_at = ? WHERE id_hash = ?").run(now, idHash);
      lastSeen = now;
    }
    const user: User = {
      id: row.user_id,
      username: row.username,
      role: isRole(row.role) ? row.role : "viewer",
      unitPatterns: parsePatterns(row.unit_patterns),
      disabled: false,
      createdAt: row.u_created_at,
      passwordChangedAt: row.password_changed_at,
      hasPassword: row.password_hash !== null,
    };
    return { ok: true, user, session: this.info({ ...row, last_seen_at: lastSeen }) };
  }

  /** Sign out: forget this session. True when it existed. */
  endSession(id: string | null | undefined): boolean {
    if (typeof id !== "string" || !TOKEN_RE.test(id)) return false;
    return this.db.prepare("DELETE FROM sessions WHERE id_hash = ?").run(sha256Hex(id)).changes > 0;
  }

  /** End one session by its hash (an admin's "sign out that device"). */
  endSessionByHash(idHash: string): boolean {
    return this.db.prepare("DELETE FROM sessions WHERE id_hash = ?").run(idHash).changes > 0;
  }

  /** End every session of a user; returns how many. */
  endAllSessions(userId: number): number {
    return this.db.prepare("DELETE FROM sessions WHERE user_id = ?").run(userId).changes;
  }

  listSessions(userId: number): SessionInfo[] {
    const rows = this.db.prepare("SELECT * FROM sessions WHERE user_id = ? ORDER BY last_seen_at DESC").all(userId) as Parameters<SessionStore["info"]>[0][];
    return rows.map((r) => this.info(r));
  }

  /** Delete sessions past their idle or absolute limit (housekeeping; validation refuses them anyway). */
  pruneExpiredSessions(): number {
    const now = this.clock();
    return this.db
      .prepare("DELETE FROM sessions WHERE last_seen_at <= ? OR created_at <= ?")
      .run(now - this.policy.idleTimeoutMs, now - this.policy.absoluteLifetimeMs).changes;
  }
}

// ---------------------------------------------------------------------------------------------
// Cookie helpers

/**
 * Under https the cookie carries the `__Host-` prefix: browsers then accept it only with Secure,
 * Path=/ and no Domain, so a sibling subdomain cannot plant or overwrite it.
 */
export function sessionCookieName(options: { secure: boolean }): string {
  return options.secure ? "__Host-gpudeck_session" : "gpudeck_session";
}

function cookieAttributes(secure: boolean): string {
  return `Path=/; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

/** `Set-Cookie` value for a session id. `maxAgeMs` (e.g. the absolute lifetime left) makes it persistent. */
export function sessionCookie(id: string, options: { secure: boolean; maxAgeMs?: Ms }): string {
  // The id is ours, but never let anything else be spliced into a header.
  if (!TOKEN_RE.test(id)) throw new Error("not a session id");
  const maxAge = options.maxAgeMs === undefined ? "" : `; Max-Age=${Math.max(0, Math.floor(options.maxAgeMs / 1000))}`;
  return `${sessionCookieName(options)}=${id}${maxAge}; ${cookieAttributes(options.secure)}`;
}

/** `Set-Cookie` value that removes the session cookie (sign-out, refused session). */
export function clearSessionCookie(options: { secure: boolean }): string {
  return `${sessionCookieName(options)}=; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; ${cookieAttributes(options.secure)}`;
}

/**
 * The session id from a request's `Cookie` header, or null. Reads only the cookie name that
 * matches `secure`. With duplicates (a planted cookie beside ours) it returns null rather than guess.
 */
export function sessionIdFromCookieHeader(cookieHeader: string | null | undefined, options: { secure: boolean }): string | null {
  if (typeof cookieHeader !== "string" || cookieHeader.length === 0 || cookieHeader.length > 16384) return null;
  const name = sessionCookieName(options);
  const found: string[] = [];
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    found.push(part.slice(eq + 1).trim());
  }
  if (found.length !== 1) return null;
  const value = found[0]!;
  return TOKEN_RE.test(value) ? value : null;
}
