/**
 * Local users and the first-run setup token, stored in the panel database.
 *
 * Every change that must end a user's sessions (password change, disable) deletes them in the
 * same transaction as the change, so the CLI ending sessions takes effect in a running panel.
 */
import type { PanelDb } from "./db";
import { randomToken, sha256Hex, TOKEN_RE } from "./crypto";
import { hashPassword, needsRehash, passwordProblem, verifyDummy, verifyPassword } from "./passwords";
import { AuthError, systemClock, type Clock, type Ms, type User } from "./types";
import { isRole, type Role } from "../contract/actors";

export const USERNAME_MAX_LENGTH = 128;
// Starts with a letter or digit (never '-', never a formula character); e-mail-like names allowed
// so reverse-proxy identities can map to local users.
const USERNAME_RE = /^[A-Za-z0-9][A-Za-z0-9._@+-]*$/;

export function usernameProblem(username: unknown): string | null {
  if (typeof username !== "string" || username.length === 0) return "username is required";
  if (username.length > USERNAME_MAX_LENGTH) return `username must be at most ${USERNAME_MAX_LENGTH} characters`;
  if (!USERNAME_RE.test(username)) {
    return "username may only contain ASCII letters, digits and . _ @ + - and must start with a letter or digit";
  }
  return null;
}

export const UNIT_PATTERN_MAX_LENGTH = 256;
const UNIT_PATTERN_RE = /^[A-Za-z0-9:_.\\@*?-]+$/;

/** A reason the unit glob is not acceptable, or null. Same characters as unit names plus `*` and `?`. */
export function unitPatternProblem(pattern: string): string | null {
  if (pattern.length === 0) return "unit pattern is empty";
  if (pattern.length > UNIT_PATTERN_MAX_LENGTH) return `unit pattern is longer than ${UNIT_PATTERN_MAX_LENGTH} characters`;
  if (pattern.startsWith("-")) return `unit pattern '${pattern}' must not start with '-'`;
  if (!UNIT_PATTERN_RE.test(pattern)) {
    return `unit pattern '${pattern}' may only contain ASCII letters, digits, :-_.\\@ and the wildcards * ?`;
  }
  return null;
}

export const DEFAULT_SETUP_TOKEN_TTL_MS: Ms = 60 * 60 * 1000;

export interface UserStoreOptions {
  clock?: Clock;
  /** How long a setup token printed at first run stays valid. Default 1 h. */
  setupTokenTtlMs?: Ms;
}

export interface CreateUserInput {
  username: string;
  /** null: no local password (only usable through the trusted reverse proxy). */
  password: string | null;
  role: Role;
  unitPatterns?: readonly string[];
}

export type CredentialCheck = { ok: true; user: User } | { ok: false; reason: "unknown-user" | "no-password" | "wrong-password" | "disabled" };

interface UserRow {
  id: number;
  username: string;
  password_hash: string | null;
  role: string;
  unit_patterns: string;
  disabled: number;
  created_at: number;
  password_changed_at: number | null;
}

function parsePatterns(json: string): string[] {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? value.filter((p): p is string => typeof p === "string") : [];
  } catch {
    return []; // fail closed: a corrupt list grants nothing
  }
}

function toUser(row: UserRow): User {
  return {
    id: row.id,
    username: row.username,
    // The CHECK constraint keeps this a role; fall back to the least privilege regardless.
    role: isRole(row.role) ? row.role : "viewer",
    unitPatterns: parsePatterns(row.unit_patterns),
    disabled: row.disabled === 1,
    createdAt: row.created_at,
    passwordChangedAt: row.password_changed_at,
    hasPassword: row.password_hash !== null,
  };
}

function normalisePatterns(patterns: readonly string[] | undefined): string[] {
  const out: string[] = [];
  for (const raw of patterns ?? []) {
    const p = raw.trim();
    if (p.length === 0) continue;
    const problem = unitPatternProblem(p);
    if (problem) throw new AuthError("invalid-unit-pattern", problem);
    if (!out.includes(p)) out.push(p);
  }
  return out;
}

export class UserStore {
  private readonly clock: Clock;
  private readonly setupTokenTtlMs: Ms;

  constructor(
    private readonly db: PanelDb,
    options: UserStoreOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.setupTokenTtlMs = options.setupTokenTtlMs ?? DEFAULT_SETUP_TOKEN_TTL_MS;
  }

  private row(username: string): UserRow | undefined {
    return this.db.prepare("SELECT * FROM users WHERE username = ? COLLATE NOCASE").get(username) as UserRow | undefined;
  }

  private rowById(id: number): UserRow | undefined {
    return this.db.prepare("SELECT * FROM users WHERE id = ?").get(id) as UserRow | undefined;
  }

  private require(username: string): UserRow {
    const row = typeof username === "string" ? this.row(username) : undefined;
    if (!row) throw new AuthError("user-not-found", `no user named '${String(username)}'`);
    return row;
  }

  /** Case-insensitive lookup; null when unknown. */
  getUser(username: string): User | null {
    if (usernameProblem(username)) return null;
    const row = this.row(username);
    return row ? toUser(row) : null;
  }

  getUserById(id: number): User | null {
    const row = this.rowById(id);
    return row ? toUser(row) : null;
  }

  listUsers(): User[] {
    return (this.db.prepare("SELECT * FROM users ORDER BY username COLLATE NOCASE").all() as UserRow[]).map(toUser);
  }

  /** Number of enabled admins: the panel needs at least one. */
  countActiveAdmins(): number {
    const row = this.db.prepare("SELECT COUNT(*) AS n FROM users WHERE role = 'admin' AND disabled = 0").get() as {
      n: number;
    };
    return row.n;
  }

  async createUser(input: CreateUserInput): Promise<User> {
    const { username, password, role } = input;
    const nameProblem = usernameProblem(username);
    if (nameProblem) throw new AuthError("invalid-username", nameProblem);
    if (!isRole(role)) throw new AuthError("invalid-role", `role must be one of viewer, operator, admin`);
    const patterns = normalisePatterns(input.unitPatterns);
    if (password !== null) {
      const problem = passwordProblem(password, username);
      if (problem) throw new AuthError("weak-password", problem);
    }
    if (this.row(username)) throw new AuthError("user-exists", `a user named '${username}' already exists`);
    const passwordHash = password === null ? null : await hashPassword(password);
    const now = this.clock();
    const insert = this.db.transaction(() => {
      // Re-check inside the transaction: the hash above yielded the event loop.
      if (this.row(username)) throw new AuthError("user-exists", `a user named '${username}' already exists`);
      const info = this.db
        .prepare(
          `INSERT INTO users (username, password_hash, role, unit_patterns, disabled, created_at, password_changed_at)
           VALUES (?, ?, ?, ?, 0, ?, ?)`,
        )
        .run(username, passwordHash, role, JSON.stringify(patterns), now, passwordHash === null ? null : now);
      return Number(info.lastInsertRowid);
    });
    return this.getUserById(insert.immediate())!;
  }

  /** Set a new password and end every session of the user. `null` removes the local password. */
  async setPassword(username: string, password: string | null): Promise<User> {
    const row = this.require(username);
    if (password !== null) {
      const problem = passwordProblem(password, row.username);
      if (problem) throw new AuthError("weak-password", problem);
    }
    const passwordHash = password === null ? null : await hashPassword(password);
    const now = this.clock();
    this.db
      .transaction(() => {
        this.db.prepare("UPDATE users SET password_hash = ?, password_changed_at = ? WHERE id = ?").run(passwordHash, now, row.id);
        this.db.prepare("DELETE FROM sessions WHERE user_id = ?").run(row.id);
      })
      .immediate();
    return this.getUserById(row.id)!;
  }

  /**
   * A signed-in user changing their own password: the current password is required. Ends every
   * session of the user (the caller starts a fresh one for the browser that made the change).
   */
  async changeOwnPassword(userId: number, currentPassword: string, newPassword: string): Promise<User> {
    const row = this.rowById(userId);
    if (!row) throw new AuthError("user-not-found", "user no longer exists");
    const ok = row.password_hash !== null && (await verifyPassword(row.password_hash, currentPassword));
    if (!ok) throw new AuthError("wrong-password", "current password is wrong");
    return this.setPassword(row.username, newPassword);
  }

  /** Disable (ending every session) or re-enable a user. Refuses to disable the last enabled admin. */
  setDisabled(username: string, disabled: boolean): User {
    const row = this.require(username);
    this.db
      .transaction(() => {
        if (disabled && row.role === "admin" && row.disabled === 0 && this.countActiveAdmins() <= 1) {
          throw new AuthError("last-admin", "refusing to disable the last enabled admin");
        }
        this.db.prepare("UPDATE users SET disabled = ? WHERE id = ?").run(disabled ? 1 : 0, row.id);
        if (disabled) this.db.prepare("DELETE FROM sessions WHERE user_id = ?").run(row.id);
      })
      .immediate();
    return this.getUserById(row.id)!;
  }

  /** Change role and/or unit patterns. Takes effect on the user's next request (sessions re-read the user). */
  updateUser(username: string, changes: { role?: Role; unitPatterns?: readonly string[] }): User {
    const row = this.require(username);
    if (changes.role !== undefined && !isRole(changes.role)) {
      throw new AuthError("invalid-role", "role must be one of viewer, operator, admin");
    }
    const patterns = changes.unitPatterns === undefined ? undefined : normalisePatterns(changes.unitPatterns);
    this.db
      .transaction(() => {
        if (changes.role !== undefined && changes.role !== "admin" && row.role === "admin" && row.disabled === 0) {
          if (this.countActiveAdmins() <= 1) throw new AuthError("last-admin", "refusing to demote the last enabled admin");
        }
        if (changes.role !== undefined) this.db.prepare("UPDATE users SET role = ? WHERE id = ?").run(changes.role, row.id);
        if (patterns !== undefined) {
          this.db.prepare("UPDATE users SET unit_patterns = ? WHERE id = ?").run(JSON.stringify(patterns), row.id);
        }
      })
      .immediate();
    return this.getUserById(row.id)!;
  }

  /**
   * Check a username and password. Unknown users and users without a password verify a dummy hash
   * so every failure costs the same; disabled users are checked too and then refused. Rehashes a
   * correct password stored with outdated parameters.
   */
  async verifyCredentials(username: string, password: string): Promise<CredentialCheck> {
    const row = usernameProblem(username) ? undefined : this.row(username);
    if (!row) {
      await verifyDummy(password);
      return { ok: false, reason: "unknown-user" };
    }
    if (row.password_hash === null) {
      await verifyDummy(password);
      return { ok: false, reason: "no-password" };
    }
    const ok = await verifyPassword(row.password_hash, password);
    if (!ok) return { ok: false, reason: "wrong-password" };
    if (row.disabled === 1) return { ok: false, reason: "disabled" };
    if (needsRehash(row.password_hash)) {
      const fresh = await hashPassword(password);
      // Only if nobody changed the password meanwhile; this is not a password change (sessions stay).
      this.db.prepare("UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?").run(fresh, row.id, row.password_hash);
    }
    return { ok: true, user: toUser(row) };
  }

  /**
   * First run: when no enabled admin exists, make a new one-time setup token (replacing any
   * earlier one) and return it, to be shown once (setup link). Only its hash is stored.
   * Returns null when an enabled admin exists.
   */
  ensureSetupToken(): { token: string; expiresAt: Ms } | null {
    const token = randomToken();
    const now = this.clock();
    const expiresAt = now + this.setupTokenTtlMs;
    const created = this.db
      .transaction(() => {
        if (this.countActiveAdmins() > 0) return false;
        this.db.prepare("DELETE FROM setup_tokens").run();
        this.db.prepare("INSERT INTO setup_tokens (token_hash, created_at, expires_at) VALUES (?, ?, ?)").run(sha256Hex(token), now, expiresAt);
        return true;
      })
      .immediate();
    return created ? { token, expiresAt } : null;
  }

  /** True while a setup token exists and no admin does (the panel shows the setup page). */
  setupPending(): boolean {
    if (this.countActiveAdmins() > 0) return false;
    const row = this.db.prepare("SELECT COUNT(*) AS n FROM setup_tokens WHERE expires_at > ?").get(this.clock()) as { n: number };
    return row.n > 0;
  }

  /** Is this setup token currently valid? (For the setup page to show the form or an error.) */
  checkSetupToken(token: string): boolean {
    if (typeof token !== "string" || !TOKEN_RE.test(token)) return false;
    if (this.countActiveAdmins() > 0) return false;
    const row = this.db.prepare("SELECT expires_at FROM setup_tokens WHERE token_hash = ?").get(sha256Hex(token)) as { expires_at: number } | undefined;
    return row !== undefined && row.expires_at > this.clock();
  }

  /**
   * Use the setup token to create the first admin. The token is consumed (all setup tokens are
   * deleted) in the same transaction that creates the admin, so it works once.
   */
  async completeSetup(token: string, username: string, password: string): Promise<User> {
    if (!this.checkSetupToken(token)) {
      throw new AuthError("invalid-setup-token", "setup link is invalid, used or expired; restart the panel or run `npm run user -- setup-token`");
    }
    const nameProblem = usernameProblem(username);
    if (nameProblem) throw new AuthError("invalid-username", nameProblem);
    const problem = passwordProblem(password, username);
    if (problem) throw new AuthError("weak-password", problem);
    const passwordHash = await hashPassword(password);
    const now = this.clock();
    const id = this.db
      .transaction(() => {
        const tokenRow = this.db.prepare("SELECT expires_at FROM setup_tokens WHERE token_hash = ?").get(sha256Hex(token)) as
          { expires_at: number } | undefined;
        if (!tokenRow || tokenRow.expires_at <= now) {
          throw new AuthError("invalid-setup-token", "setup link is invalid, used or expired");
        }
        if (this.countActiveAdmins() > 0) throw new AuthError("admin-exists", "an admin already exists");
        if (this.row(username)) throw new AuthError("user-exists", `a user named '${username}' already exists`);
        this.db.prepare("DELETE FROM setup_tokens").run();
        const info = this.db
          .prepare(
            `INSERT INTO users (username, password_hash, role, unit_patterns, disabled, created_at, password_changed_at)
           VALUES (?, ?, 'admin', '[]', 0, ?, ?)`,
          )
          .run(username, passwordHash, now, now);
        return Number(info.lastInsertRowid);
      })
      .immediate();
    return this.getUserById(id)!;
  }
}
