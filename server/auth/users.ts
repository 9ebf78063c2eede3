/**
 * Local users and the first-run setup token, stored in the panel database (SQLite or PostgreSQL).
 *
 * Every change that must end a user's sessions (password change, disable) deletes them in the
 * same transaction as the change, with a `sessions` panel event, so the CLI or another replica
 * ending sessions takes effect in every running panel. Changes that check before they write (the
 * last admin, a free name) run one at a time across replicas (`USERS_LOCK`). Name and unit-pattern
 * rules and the row-to-User mapping are in userFields.ts.
 */
import type { Db, Store } from "../store/database";
import { NO_NOTIFIER, publishEvent, type EventNotifier } from "../store/events";
import type { StoreSource } from "../store/lazyStore";
import { randomToken, sha256Hex, TOKEN_RE } from "./crypto";
import { hashPassword, needsRehash, passwordProblem, verifyDummy, verifyPassword } from "./passwords";
import { AuthError, systemClock, type Clock, type Ms, type User } from "./types";
import { isRole, type Role } from "../contract/actors";
import { countEnabledAdmins, normalisePatterns, toUser, usernameProblem, USERS_LOCK, type UserRow } from "./userFields";

export const DEFAULT_SETUP_TOKEN_TTL_MS: Ms = 60 * 60 * 1000;

export interface UserStoreOptions {
  clock?: Clock;
  /** told after a write that published a panel event (the process's event bus) */
  events?: EventNotifier;
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

export class UserStore {
  private readonly clock: Clock;
  private readonly setupTokenTtlMs: Ms;
  private readonly events: EventNotifier;

  constructor(
    private readonly source: StoreSource,
    options: UserStoreOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.setupTokenTtlMs = options.setupTokenTtlMs ?? DEFAULT_SETUP_TOKEN_TTL_MS;
    this.events = options.events ?? NO_NOTIFIER;
  }

  private db(): Promise<Store> {
    return this.source.get();
  }

  /** A user was changed outside this store (an OIDC sign-in's groups, ./oidc/accounts.ts): read the events it published now. */
  announceChange(): void {
    this.events.poke();
  }

  // user names are ASCII (usernameProblem), so SQL's lower() and JavaScript's agree
  private row(db: Db, username: string): Promise<UserRow | undefined> {
    return db
      .selectFrom("users")
      .selectAll()
      .where((eb) => eb(eb.fn("lower", ["username"]), "=", String(username).toLowerCase()))
      .executeTakeFirst();
  }

  private rowById(db: Db, id: number): Promise<UserRow | undefined> {
    return db.selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst();
  }

  private async require(db: Db, username: string): Promise<UserRow> {
    const row = typeof username === "string" ? await this.row(db, username) : undefined;
    if (!row) throw new AuthError("user-not-found", `no user named '${String(username)}'`);
    return row;
  }

  private countAdmins(db: Db): Promise<number> {
    return countEnabledAdmins(db);
  }

  /** A user's sessions ended or their access changed: every replica's open streams of theirs re-check. */
  private async sessionsChanged(tx: Db, store: Store, row: UserRow): Promise<void> {
    await publishEvent(tx, store.dialect, "sessions", { userId: row.id, username: row.username }, this.clock());
  }

  /** Case-insensitive lookup; null when unknown. */
  async getUser(username: string): Promise<User | null> {
    if (usernameProblem(username)) return null;
    const row = await this.row((await this.db()).db, username);
    return row ? toUser(row) : null;
  }

  async getUserById(id: number): Promise<User | null> {
    const row = await this.rowById((await this.db()).db, id);
    return row ? toUser(row) : null;
  }

  async listUsers(): Promise<User[]> {
    const { db } = await this.db();
    const rows = await db
      .selectFrom("users")
      .selectAll()
      .orderBy((eb) => eb.fn("lower", ["username"]))
      .execute();
    return rows.map(toUser);
  }

  /** Number of enabled admins: the panel needs at least one. */
  async countActiveAdmins(): Promise<number> {
    return this.countAdmins((await this.db()).db);
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
    const store = await this.db();
    if (await this.row(store.db, username)) throw new AuthError("user-exists", `a user named '${username}' already exists`);
    const passwordHash = password === null ? null : await hashPassword(password);
    const now = this.clock();
    const row = await store.write(
      async (tx) => {
        // Re-check inside the transaction: the hash above yielded the event loop.
        if (await this.row(tx, username)) throw new AuthError("user-exists", `a user named '${username}' already exists`);
        return tx
          .insertInto("users")
          .values({
            username,
            password_hash: passwordHash,
            role,
            unit_patterns: JSON.stringify(patterns),
            disabled: 0,
            created_at: now,
            password_changed_at: passwordHash === null ? null : now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
      },
      { lock: USERS_LOCK },
    );
    return toUser(row);
  }

  /** Set a new password and end every session of the user. `null` removes the local password. */
  async setPassword(username: string, password: string | null): Promise<User> {
    const store = await this.db();
    const row = await this.require(store.db, username);
    if (password !== null) {
      const problem = passwordProblem(password, row.username);
      if (problem) throw new AuthError("weak-password", problem);
    }
    const passwordHash = password === null ? null : await hashPassword(password);
    const now = this.clock();
    const after = await store.write(async (tx) => {
      const updated = await tx
        .updateTable("users")
        .set({ password_hash: passwordHash, password_changed_at: now })
        .where("id", "=", row.id)
        .returningAll()
        .executeTakeFirst();
      if (!updated) throw new AuthError("user-not-found", `no user named '${row.username}'`);
      await tx.deleteFrom("sessions").where("user_id", "=", row.id).execute();
      await this.sessionsChanged(tx, store, updated);
      return updated;
    });
    this.events.poke();
    return toUser(after);
  }

  /**
   * A signed-in user changing their own password: the current password is required. Ends every
   * session of the user (the caller starts a fresh one for the browser that made the change).
   */
  async changeOwnPassword(userId: number, currentPassword: string, newPassword: string): Promise<User> {
    const row = await this.rowById((await this.db()).db, userId);
    if (!row) throw new AuthError("user-not-found", "user no longer exists");
    const ok = row.password_hash !== null && (await verifyPassword(row.password_hash, currentPassword));
    if (!ok) throw new AuthError("wrong-password", "current password is wrong");
    return this.setPassword(row.username, newPassword);
  }

  /** Disable (ending every session) or re-enable a user. Refuses to disable the last enabled admin. */
  async setDisabled(username: string, disabled: boolean): Promise<User> {
    const store = await this.db();
    const after = await store.write(
      async (tx) => {
        const row = await this.require(tx, username);
        if (disabled && row.role === "admin" && row.disabled === 0 && (await this.countAdmins(tx)) <= 1) {
          throw new AuthError("last-admin", "refusing to disable the last enabled admin");
        }
        const updated = await tx
          .updateTable("users")
          .set({ disabled: disabled ? 1 : 0 })
          .where("id", "=", row.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        if (disabled) {
          await tx.deleteFrom("sessions").where("user_id", "=", row.id).execute();
          await this.sessionsChanged(tx, store, updated);
        }
        return updated;
      },
      { lock: USERS_LOCK },
    );
    if (disabled) this.events.poke();
    return toUser(after);
  }

  /** Change role and/or unit patterns. Takes effect on the user's next request (sessions re-read the user) and on their open streams. */
  async updateUser(username: string, changes: { role?: Role; unitPatterns?: readonly string[] }): Promise<User> {
    if (changes.role !== undefined && !isRole(changes.role)) {
      throw new AuthError("invalid-role", "role must be one of viewer, operator, admin");
    }
    const patterns = changes.unitPatterns === undefined ? undefined : normalisePatterns(changes.unitPatterns);
    const store = await this.db();
    const after = await store.write(
      async (tx) => {
        const row = await this.require(tx, username);
        if (changes.role !== undefined && changes.role !== "admin" && row.role === "admin" && row.disabled === 0) {
          if ((await this.countAdmins(tx)) <= 1) throw new AuthError("last-admin", "refusing to demote the last enabled admin");
        }
        const set = {
          ...(changes.role !== undefined ? { role: changes.role } : {}),
          ...(patterns !== undefined ? { unit_patterns: JSON.stringify(patterns) } : {}),
        };
        if (Object.keys(set).length === 0) return row;
        const updated = await tx.updateTable("users").set(set).where("id", "=", row.id).returningAll().executeTakeFirstOrThrow();
        // their open streams (on every replica) re-check what they may still see
        await this.sessionsChanged(tx, store, updated);
        return updated;
      },
      { lock: USERS_LOCK },
    );
    this.events.poke();
    return toUser(after);
  }

  /**
   * Check a username and password. Unknown users and users without a password verify a dummy hash
   * so every failure costs the same; disabled users are checked too and then refused. Rehashes a
   * correct password stored with outdated parameters.
   */
  async verifyCredentials(username: string, password: string): Promise<CredentialCheck> {
    const { db } = await this.db();
    const row = usernameProblem(username) ? undefined : await this.row(db, username);
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
      await db.updateTable("users").set({ password_hash: fresh }).where("id", "=", row.id).where("password_hash", "=", row.password_hash).execute();
    }
    return { ok: true, user: toUser(row) };
  }

  /**
   * First run: when no enabled admin exists, make a new one-time setup token (replacing any
   * earlier one) and return it, to be shown once (setup link). Only its hash is stored.
   * Returns null when an enabled admin exists.
   */
  async ensureSetupToken(): Promise<{ token: string; expiresAt: Ms } | null> {
    const token = randomToken();
    const now = this.clock();
    const expiresAt = now + this.setupTokenTtlMs;
    const store = await this.db();
    const created = await store.write(
      async (tx) => {
        if ((await this.countAdmins(tx)) > 0) return false;
        await tx.deleteFrom("setup_tokens").execute();
        await tx
          .insertInto("setup_tokens")
          .values({ token_hash: sha256Hex(token), created_at: now, expires_at: expiresAt })
          .execute();
        return true;
      },
      { lock: USERS_LOCK },
    );
    return created ? { token, expiresAt } : null;
  }

  /** True while a setup token exists and no admin does (the panel shows the setup page). */
  async setupPending(): Promise<boolean> {
    const { db } = await this.db();
    if ((await this.countAdmins(db)) > 0) return false;
    const r = await db
      .selectFrom("setup_tokens")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("expires_at", ">", this.clock())
      .executeTakeFirstOrThrow();
    return Number(r.n) > 0;
  }

  private async tokenRow(db: Db, token: string): Promise<{ expires_at: number } | undefined> {
    return db.selectFrom("setup_tokens").select("expires_at").where("token_hash", "=", sha256Hex(token)).executeTakeFirst();
  }

  /** Is this setup token currently valid? (For the setup page to show the form or an error.) */
  async checkSetupToken(token: string): Promise<boolean> {
    if (typeof token !== "string" || !TOKEN_RE.test(token)) return false;
    const { db } = await this.db();
    if ((await this.countAdmins(db)) > 0) return false;
    const row = await this.tokenRow(db, token);
    return row !== undefined && row.expires_at > this.clock();
  }

  /**
   * Use the setup token to create the first admin. The token is consumed (all setup tokens are
   * deleted) in the same transaction that creates the admin, so it works once.
   */
  async completeSetup(token: string, username: string, password: string): Promise<User> {
    if (!(await this.checkSetupToken(token))) {
      throw new AuthError("invalid-setup-token", "setup link is invalid, used or expired; restart the panel or run `npm run user -- setup-token`");
    }
    const nameProblem = usernameProblem(username);
    if (nameProblem) throw new AuthError("invalid-username", nameProblem);
    const problem = passwordProblem(password, username);
    if (problem) throw new AuthError("weak-password", problem);
    const passwordHash = await hashPassword(password);
    const now = this.clock();
    const store = await this.db();
    const row = await store.write(
      async (tx) => {
        const tokenRow = await this.tokenRow(tx, token);
        if (!tokenRow || tokenRow.expires_at <= now) {
          throw new AuthError("invalid-setup-token", "setup link is invalid, used or expired");
        }
        if ((await this.countAdmins(tx)) > 0) throw new AuthError("admin-exists", "an admin already exists");
        if (await this.row(tx, username)) throw new AuthError("user-exists", `a user named '${username}' already exists`);
        await tx.deleteFrom("setup_tokens").execute();
        return tx
          .insertInto("users")
          .values({ username, password_hash: passwordHash, role: "admin", unit_patterns: "[]", disabled: 0, created_at: now, password_changed_at: now })
          .returningAll()
          .executeTakeFirstOrThrow();
      },
      { lock: USERS_LOCK },
    );
    return toUser(row);
  }
}
