/**
 * A local user's stored fields: what a name and a unit pattern may be, how a `users` row reads
 * as a User, and what every writer of users shares (the enabled-admin count, the lock). Used by
 * the user store (users.ts), single sign-on accounts (oidc/), sessions and API tokens.
 */
import type { Selectable } from "kysely";
import type { Db } from "../store/database";
import type { UsersTable } from "../store/schema";
import { AuthError, type User } from "./types";
import { isRole } from "../contract/actors";

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

export type UserRow = Selectable<UsersTable>;

/** The advisory lock of user changes on PostgreSQL: changes that check before they write (the last admin, a free name) run one at a time across replicas. */
export const USERS_LOCK = "gpudeck.users";

export function parsePatterns(json: string): string[] {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? value.filter((p): p is string => typeof p === "string") : [];
  } catch {
    return []; // fail closed: a corrupt list grants nothing
  }
}

export function toUser(row: UserRow): User {
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
    source: row.source,
  };
}

export function normalisePatterns(patterns: readonly string[] | undefined): string[] {
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

/** Enabled admins (the last one may not be demoted or disabled); `db` may be a transaction. */
export async function countEnabledAdmins(db: Db): Promise<number> {
  const r = await db
    .selectFrom("users")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("role", "=", "admin")
    .where("disabled", "=", 0)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
