/**
 * Login sessions: random 256-bit ids handed to the browser in an httpOnly cookie; the database
 * keeps only their SHA-256, so a copy of panel.db cannot be replayed as a cookie. Every request
 * looks its session up in the database, so any replica accepts a cookie another one set (no
 * sticky sessions). Ending sessions publishes a `sessions` panel event in the same transaction:
 * every replica's open streams of that user re-check at once.
 */
import type { Selectable } from "kysely";
import type { Store } from "../store/database";
import { NO_NOTIFIER, publishEvent, type EventNotifier } from "../store/events";
import type { StoreSource } from "../store/lazyStore";
import type { SessionsTable } from "../store/schema";
import { randomToken, sha256Hex, TOKEN_RE } from "./crypto";
import { isRole } from "../contract/actors";
import { systemClock, type Clock, type Ms, type User } from "./types";
import { parsePatterns } from "./userFields";

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
  /**
   * Sessions a user may hold at once (GPUDECK_SESSIONS_PER_USER). Signing in once more ends the
   * oldest: one account signed in a hundred times must not hold a hundred sessions (and their
   * streams). Default 20.
   */
  maxPerUser: number;
}

export const DEFAULT_SESSION_POLICY: Readonly<SessionPolicy> = Object.freeze({
  idleTimeoutMs: 12 * 60 * 60 * 1000,
  absoluteLifetimeMs: 7 * 24 * 60 * 60 * 1000,
  touchIntervalMs: 60 * 1000,
  maxPerUser: 20,
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

const META_MAX = 512;
function clip(value: string | null | undefined): string | null {
  return typeof value === "string" ? value.slice(0, META_MAX) : null;
}

// the sealed ID token of a single sign-on session (./oidc/idTokens.ts) is read only at sign-out
type SessionRow = Omit<Selectable<SessionsTable>, "oidc_id_token">;

export class SessionStore {
  readonly policy: Readonly<SessionPolicy>;
  private readonly clock: Clock;
  private readonly events: EventNotifier;

  constructor(
    private readonly source: StoreSource,
    options: { clock?: Clock; policy?: Partial<SessionPolicy>; events?: EventNotifier } = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.policy = Object.freeze({ ...DEFAULT_SESSION_POLICY, ...options.policy });
    this.events = options.events ?? NO_NOTIFIER;
  }

  private info(row: SessionRow): SessionInfo {
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

  /**
   * Start a session; the returned `id` goes into the cookie and is never stored. When the user
   * then holds more than `maxPerUser` sessions, the oldest end (in the same transaction, with a
   * `sessions` event: their streams end too); `ended` says how many.
   */
  async createSession(
    userId: number,
    meta: { sourceAddr?: string | null; userAgent?: string | null } = {},
  ): Promise<{ id: string; session: SessionInfo; ended: number }> {
    const id = randomToken();
    const now = this.clock();
    const row: SessionRow = {
      id_hash: sha256Hex(id),
      user_id: userId,
      created_at: now,
      last_seen_at: now,
      source_addr: clip(meta.sourceAddr),
      user_agent: clip(meta.userAgent),
    };
    const store = await this.source.get();
    const ended = await store.write(async (tx) => {
      await tx.insertInto("sessions").values(row).execute();
      const over = await tx
        .selectFrom("sessions")
        .select("id_hash")
        .where("user_id", "=", userId)
        .orderBy("created_at", "desc")
        .orderBy("last_seen_at", "desc")
        .offset(this.policy.maxPerUser)
        .limit(1_000)
        .execute();
      const oldest = over.map((r) => r.id_hash).filter((h) => h !== row.id_hash);
      if (oldest.length === 0) return 0;
      await tx.deleteFrom("sessions").where("id_hash", "in", oldest).execute();
      await publishEvent(tx, store.dialect, "sessions", { userId, username: null }, now);
      return oldest.length;
    });
    if (ended > 0) this.events.poke();
    return { id, session: this.info(row), ended };
  }

  /**
   * Look up a session id from a cookie. Valid: touches last-seen (unless `touch: false`: a check
   * that is not the person doing something, such as an open live stream re-checking, must not keep
   * the session from idling out) and returns the user as stored now (so role, pattern and disable
   * changes apply at once). Invalid: says why, and deletes sessions that are over.
   */
  async validateSession(id: string | null | undefined, options: { touch?: boolean } = {}): Promise<SessionCheck> {
    if (id === null || id === undefined || id === "") return { ok: false, user: null, reason: "missing" };
    if (typeof id !== "string" || !TOKEN_RE.test(id)) return { ok: false, user: null, reason: "malformed" };
    const idHash = sha256Hex(id);
    const { db } = await this.source.get();
    const row = await db
      .selectFrom("sessions as s")
      .innerJoin("users as u", "u.id", "s.user_id")
      .select([
        "s.id_hash",
        "s.user_id",
        "s.created_at",
        "s.last_seen_at",
        "s.source_addr",
        "s.user_agent",
        "u.username",
        "u.password_hash",
        "u.role",
        "u.unit_patterns",
        "u.disabled",
        "u.created_at as u_created_at",
        "u.password_changed_at",
        "u.source",
      ])
      .where("s.id_hash", "=", idHash)
      .executeTakeFirst();
    if (!row) return { ok: false, user: null, reason: "unknown" };
    const now = this.clock();
    const refuse = async (reason: SessionRefusal): Promise<SessionCheck> => {
      await db.deleteFrom("sessions").where("id_hash", "=", idHash).execute();
      return { ok: false, user: null, reason };
    };
    if (row.disabled === 1) return refuse("user-disabled");
    // Belt and braces: a password change deletes the user's sessions, but never honour one older.
    if (row.password_changed_at !== null && row.created_at < row.password_changed_at) return refuse("password-changed");
    if (now >= row.created_at + this.policy.absoluteLifetimeMs) return refuse("expired");
    if (now >= row.last_seen_at + this.policy.idleTimeoutMs) return refuse("idle-timeout");
    let lastSeen = row.last_seen_at;
    if (options.touch !== false && now - row.last_seen_at >= this.policy.touchIntervalMs) {
      await db.updateTable("sessions").set({ last_seen_at: now }).where("id_hash", "=", idHash).execute();
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
      source: row.source,
    };
    return { ok: true, user, session: this.info({ ...row, last_seen_at: lastSeen }) };
  }

  /** Delete sessions and say so to every replica in the same transaction; how many went. */
  private async end(store: Store, where: { idHash: string } | { userId: number }): Promise<number> {
    const n = await store.write(async (tx) => {
      const gone = await tx
        .deleteFrom("sessions")
        .where((eb) => ("idHash" in where ? eb("id_hash", "=", where.idHash) : eb("user_id", "=", where.userId)))
        .returning("user_id")
        .execute();
      if (gone.length > 0) await publishEvent(tx, store.dialect, "sessions", { userId: gone[0]!.user_id, username: null }, this.clock());
      return gone.length;
    });
    if (n > 0) this.events.poke();
    return n;
  }

  /** Sign out: forget this session. True when it existed. */
  async endSession(id: string | null | undefined): Promise<boolean> {
    if (typeof id !== "string" || !TOKEN_RE.test(id)) return false;
    return (await this.end(await this.source.get(), { idHash: sha256Hex(id) })) > 0;
  }

  /** End one session by its hash (an admin's "sign out that device"). */
  async endSessionByHash(idHash: string): Promise<boolean> {
    return (await this.end(await this.source.get(), { idHash })) > 0;
  }

  /** End every session of a user; returns how many. */
  async endAllSessions(userId: number): Promise<number> {
    return this.end(await this.source.get(), { userId });
  }

  async listSessions(userId: number): Promise<SessionInfo[]> {
    const { db } = await this.source.get();
    const rows = await db.selectFrom("sessions").selectAll().where("user_id", "=", userId).orderBy("last_seen_at", "desc").execute();
    return rows.map((r) => this.info(r));
  }

  /** Delete sessions past their idle or absolute limit (housekeeping; validation refuses them anyway). */
  async pruneExpiredSessions(): Promise<number> {
    const now = this.clock();
    const { db } = await this.source.get();
    const r = await db
      .deleteFrom("sessions")
      .where((eb) => eb.or([eb("last_seen_at", "<=", now - this.policy.idleTimeoutMs), eb("created_at", "<=", now - this.policy.absoluteLifetimeMs)]))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
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
