/**
 * The panel database's tables as Kysely sees them, the same for SQLite and PostgreSQL. Times are
 * milliseconds since the epoch in 64-bit integers (PostgreSQL's int8 is read back as a number:
 * ./database.ts sets the parser); booleans are 0/1 integers and lists are JSON text, so both
 * databases take one code path.
 */
import type { ColumnType, Generated } from "kysely";
import type { AlertTables } from "./alertTables";

type Ms = number;

export interface UsersTable {
  id: Generated<number>;
  username: string;
  password_hash: string | null;
  role: "viewer" | "operator" | "admin";
  /** JSON list of unit patterns */
  unit_patterns: ColumnType<string, string | undefined, string>;
  disabled: ColumnType<number, number | undefined, number>;
  created_at: Ms;
  password_changed_at: Ms | null;
  /** where the account comes from (migration 006): a local account, or the OIDC provider */
  source: ColumnType<"local" | "oidc", "local" | "oidc" | undefined, "local" | "oidc">;
  /** the provider's `sub` for an OIDC account (migration 006) */
  oidc_subject: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface SessionsTable {
  id_hash: string;
  user_id: number;
  created_at: Ms;
  last_seen_at: Ms;
  source_addr: string | null;
  user_agent: string | null;
  /** single sign-on: the provider's ID token, sealed (migration 007; ../auth/oidc/idTokens.ts) */
  oidc_id_token: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface SetupTokensTable {
  token_hash: string;
  created_at: Ms;
  expires_at: Ms;
}

export interface AuditLogTable {
  id: Generated<number>;
  at: Ms;
  user: string | null;
  role: string | null;
  source_addr: string | null;
  host: string | null;
  unit: string | null;
  action: string;
  reason: string | null;
  outcome: string;
  job_id: number | null;
  detail: string | null;
}

export interface HostsTable {
  name: string;
  url: string;
  /** sealed (../secretBox.ts, context hosts.token/<name>) */
  token: string;
  /** https: PEM of the CA the agent's certificate must chain to (004) */
  ca_pem: ColumnType<string | null, string | null | undefined, string | null>;
  /** https: the agent certificate's pinned SHA-256 (004) */
  fingerprint: ColumnType<string | null, string | null | undefined, string | null>;
  /** 1: plain http to an agent off loopback is meant (004) */
  insecure_http: ColumnType<number, number | undefined, number>;
  created_at: Ms;
  created_by: string | null;
  updated_at: Ms;
}

/**
 * Things people cause (actions, audit rows, user and session changes, alert state), for every
 * panel replica: written in the same transaction as the change; replicas catch up by id.
 */
export interface PanelEventsTable {
  id: Generated<number>;
  at: Ms;
  kind: string;
  /** JSON */
  body: string;
}

/** The "same action twice within N s" guard, one row per (host, unit): one atomic claim for all replicas. */
export interface ActionGuardTable {
  host: string;
  unit: string;
  action: string;
  user: string;
  last_at: Ms;
}

/** rate-limiter-flexible's counters (migration 003): one row per bucket key. */
export interface LoginLimitsTable {
  key: string;
  points: number;
  /** ms; null: never */
  expire: Ms | null;
}

/** Keys of audit rows written once for every replica together (migration 003). */
export interface AuditOnceTable {
  key: string;
  at: Ms;
}

/** API tokens (migration 005): only the secret's SHA-256 is stored. */
export interface ApiTokensTable {
  id: Generated<number>;
  owner_id: number;
  name: string;
  kind: "personal" | "service";
  role: "viewer" | "operator" | "admin";
  /** JSON list of unit patterns (operator tokens) */
  units: ColumnType<string, string | undefined, string>;
  token_hash: string;
  created_at: Ms;
  expires_at: Ms;
  last_used_at: Ms | null;
  revoked_at: Ms | null;
}

/** Sign-ins in progress at the OIDC provider (migration 006): one row per browser sent there, used once. */
export interface OidcFlowsTable {
  id_hash: string;
  state: string;
  nonce: string;
  code_verifier: string;
  next: string;
  created_at: Ms;
  expires_at: Ms;
  used_at: Ms | null;
}

/** The panel's VAPID key pair (migration 008): one row, id 1; private_key sealed. */
export interface PushVapidTable {
  id: number;
  public_key: string;
  private_key: string;
  created_at: Ms;
}

/** A browser subscribed to Web Push by a user (migration 008); keys: sealed JSON { p256dh, auth }. */
export interface PushSubscriptionsTable {
  id: Generated<number>;
  user_id: number;
  endpoint: string;
  keys: string;
  user_agent: string | null;
  created_at: Ms;
  last_ok_at: Ms | null;
  last_error: string | null;
}

/** A user's TOTP second factor (migration 007): the secret sealed, the last accepted time step, hashed recovery codes. */
export interface UserTotpTable {
  user_id: number;
  /** sealed (../secretBox.ts, context user_totp.secret/<user id>) */
  secret: string;
  created_at: Ms;
  /** null while enrolment waits for its first code */
  enabled_at: Ms | null;
  last_step: Ms | null;
  /** JSON list of SHA-256 hex of unused recovery codes */
  recovery_codes: ColumnType<string, string | undefined, string>;
}

/** Sign-ins waiting for their second factor (migration 007). */
export interface TotpChallengesTable {
  id_hash: string;
  user_id: number;
  created_at: Ms;
  expires_at: Ms;
  failures: ColumnType<number, number | undefined, number>;
}

export interface PanelSchema extends AlertTables {
  users: UsersTable;
  sessions: SessionsTable;
  setup_tokens: SetupTokensTable;
  audit_log: AuditLogTable;
  hosts: HostsTable;
  panel_events: PanelEventsTable;
  action_guard: ActionGuardTable;
  login_limits: LoginLimitsTable;
  audit_once: AuditOnceTable;
  api_tokens: ApiTokensTable;
  oidc_flows: OidcFlowsTable;
  push_vapid: PushVapidTable;
  push_subscriptions: PushSubscriptionsTable;
  user_totp: UserTotpTable;
  totp_challenges: TotpChallengesTable;
}
