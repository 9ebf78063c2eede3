/**
 * Panel users as the users page sees them (`users.*`). Part of the contract: imports nothing
 * else of the project.
 */
import type { Role } from "./actors";

/** A user as the users page sees it: never the password hash. */
export interface PanelUser {
  name: string;
  role: Role;
  unitPatterns: string[];
  disabled: boolean;
  /** false: no local password (only usable through the trusted reverse proxy). */
  hasPassword: boolean;
  /** "oidc": signs in through the identity provider, role and units from its groups. */
  source: "local" | "oidc";
  createdAt: number;
  passwordChangedAt: number | null;
  /** Two-factor sign-in (TOTP) is on for this local account. */
  twoFactor: boolean;
  /** Last successful sign-in still in the audit log (retention applies); null when none. */
  lastSignInAt: number | null;
}
