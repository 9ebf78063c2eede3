/**
 * Shared types of the panel's auth module. Times are milliseconds since the epoch (`Ms`).
 */
import type { Ms } from "../contract/types";

export type { Ms };

/** Injectable clock so expiry and rate limits can be tested without sleeping. */
export type Clock = () => Ms;
export const systemClock: Clock = () => Date.now();

import type { Role } from "../contract/actors";

/** A stored user as the rest of the panel may see it (never the password hash). */
export interface User {
  id: number;
  username: string;
  role: Role;
  /** Unit globs an operator may act on (`*`, `?`), e.g. `vllm-team-a-*`. Ignored for other roles. */
  unitPatterns: string[];
  disabled: boolean;
  createdAt: Ms;
  /** null for users without a local password (reverse-proxy-only accounts). */
  passwordChangedAt: Ms | null;
  hasPassword: boolean;
  /** "oidc": created by a sign-in through the identity provider (no local password; role from its groups). */
  source: "local" | "oidc";
}

/**
 * The identity acting on a request: a local user signed in with a session, or a user named by a
 * trusted reverse proxy (which may have no row in the users table: `userId` null, default role).
 */
export interface Principal {
  userId: number | null;
  username: string;
  role: Role;
  unitPatterns: readonly string[];
  via: "session" | "proxy" | "token";
  /** via "token": the API token acting (its owner is `userId`/`username`) */
  token?: { id: number; name: string; kind: "personal" | "service"; expiresAt: Ms };
}

export type AuthErrorCode =
  | "invalid-username"
  | "weak-password"
  | "invalid-role"
  | "invalid-unit-pattern"
  | "user-exists"
  | "user-not-found"
  | "last-admin"
  | "wrong-password"
  | "invalid-setup-token"
  | "admin-exists"
  | "schema-too-new"
  | "invalid-token"
  | "two-factor";

/** Thrown by store mutations (user management, setup). `message` is safe to show to the caller. */
export class AuthError extends Error {
  readonly code: AuthErrorCode;
  constructor(code: AuthErrorCode, message: string) {
    super(message);
    this.name = "AuthError";
    this.code = code;
  }
}
