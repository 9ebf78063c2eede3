/**
 * Panel configuration (environment):
 *   GPUDECK_AGENTS_FILE  the agents to watch, a JSON list (see fleet/hostsConfig.ts); or, for one:
 *   GPUDECK_AGENT_URL    the agent's base URL (default http://127.0.0.1:9300)
 *   GPUDECK_AGENT_TOKEN  its bearer token (default: read <data dir>/agent-token, as the local agent writes it)
 *   GPUDECK_AGENT_NAME   its host name in the panel (default: this machine's name for a local agent)
 *   GPUDECK_DATA_DIR     panel database (panel.db) and token file (default ./.data)
 *   GPUDECK_DATABASE_URL postgres://… : the panel database on PostgreSQL instead (several panel replicas)
 *   GPUDECK_DEMO=1       demo mode: no login (a demo admin), a visible banner (set by `npm run demo`)
 *   GPUDECK_PUBLIC_URL   the URL people use, e.g. https://gpudeck.example: its host is allowed,
 *                        https makes the session cookie Secure (`__Host-`), the setup link uses it
 *   GPUDECK_ALLOWED_ORIGINS  extra origins allowed to call mutations/subscriptions (comma-separated)
 *   GPUDECK_ALLOWED_HOSTS    extra host names the panel answers to (comma-separated; DNS-rebinding guard)
 *   GPUDECK_SESSION_IDLE_MINUTES (default 720), GPUDECK_SESSION_MAX_HOURS (default 168)
 *   GPUDECK_AUDIT_RETENTION_DAYS (default 90)
 *   GPUDECK_ACTION_GUARD_SECONDS  second restart/stop/kill of a unit within this needs confirmation (default 60)
 *   GPUDECK_OPERATOR_MAY_KILL=1   operators may kill their units (default: admins only)
 *   GPUDECK_VIEWER_JOURNAL=1      viewers may read units' journals (default: operators and admins)
 *   GPUDECK_STREAMS_PER_SESSION (default 16), GPUDECK_STREAMS_MAX (default 2000): live streams at most
 *   per session and for the whole panel
 *   GPUDECK_TOKEN_REQUESTS_PER_MINUTE (default 600): API requests per token per minute, all replicas together
 *   Trusted reverse proxy (off unless GPUDECK_PROXY_AUTH_HEADER is set):
 *   GPUDECK_PROXY_AUTH_HEADER (e.g. x-forwarded-user), GPUDECK_TRUSTED_PROXIES (addresses/CIDRs; also
 *   without the header: clients' addresses are then read from X-Forwarded-For sent by those),
 *   GPUDECK_PROXY_DEFAULT_ROLE (viewer|operator|admin; unset refuses unknown users),
 *   GPUDECK_PROXY_DEFAULT_UNITS (globs for such operators),
 *   GPUDECK_PROXY_SECRET_FILE or GPUDECK_PROXY_SECRET (a secret of at least 32 characters the proxy
 *   sends in GPUDECK_PROXY_SECRET_HEADER, default x-gpudeck-proxy-secret; then nothing else is believed;
 *   required when GPUDECK_TRUSTED_PROXIES holds a range rather than single addresses)
 *   Alerts (see server/alerts/config.ts): GPUDECK_ALERT_WEBHOOK_URL, GPUDECK_ALERT_CHANNELS,
 *   GPUDECK_ALERT_RULES, GPUDECK_ALERT_GROUP_SECONDS, GPUDECK_ALERT_RETRY_HOURS, GPUDECK_ALERT_RATE_PER_MINUTE,
 *   GPUDECK_MAINTENANCE
 *   GPUDECK_STATUS_TOKEN  turns the status page on, reachable with this token (at least 16 characters)
 *   Limits per user (see README, Security):
 *   GPUDECK_STREAMS_PER_USER (default 32): live streams of one user across all their sessions
 *   GPUDECK_SESSIONS_PER_USER (default 20): sessions one user holds; signing in once more ends the oldest
 *   GPUDECK_QUERIES_PER_MINUTE (default 120): expensive queries (journal, diagnosis, history) per user a minute
 *   GPUDECK_BATCH_MAX (default 20): calls in one batched API request
 *   Single sign-on: GPUDECK_OIDC_* (see server/auth/oidc/config.ts)
 *   Web Push: GPUDECK_PUSH, GPUDECK_PUSH_SUBJECT, GPUDECK_PUSH_GROUPS (see server/push/config.ts)
 *   GPUDECK_REQUIRE_2FA_FOR  roles (comma-separated) whose local accounts must sign in with a TOTP code;
 *                        they are sent to set it up after sign-in and can do nothing else until they have
 */
import { readFileSync } from "node:fs";
import { hostname as osHostname } from "node:os";
import path from "node:path";
import { AlertsConfigError, loadAlertsConfig, type AlertsConfig } from "../alerts/config";
import { loadPushConfig, PushConfigError, type PushConfig } from "../push/config";
import { loadOidcConfig, OidcConfigError, type OidcConfig } from "../auth/oidc/config";
import { trustedProxyList, trustedProxyRanges, type ProxyAuthConfig } from "../auth/proxy";
import { isRole, type Role } from "../contract/actors";
import { EgressConfigError, egressPolicyFromEnv, type EgressPolicy } from "../egress/guard";
import { HostsConfigError, loadHostsFromEnv, type HostConfig } from "./fleet/hostsConfig";

export interface PanelConfig {
  /** The agents named by the environment (the Hosts page adds more, stored in panel.db). */
  hosts: HostConfig[];
  /** PostgreSQL instead of `<dataDir>/panel.db` (never logged with its password). */
  databaseUrl: string | null;
  dataDir: string;
  demo: boolean;
  publicUrl: string | null;
  /** Session cookie with Secure and the `__Host-` prefix (the panel is served over https). */
  secureCookies: boolean;
  allowedOrigins: string[];
  /** Host names (no port) a browser may address the panel by, besides IP literals and localhost. */
  allowedHosts: string[];
  sessionIdleMs: number;
  sessionMaxMs: number;
  auditRetentionMs: number;
  actionGuardMs: number;
  operatorMayKill: boolean;
  /** Viewers may read units' journals (GPUDECK_VIEWER_JOURNAL=1); off by default. */
  viewerJournal: boolean;
  /** Live streams (SSE) at most per session, and for the whole panel. */
  streamsPerSession: number;
  streamsMax: number;
  /** API requests per token per minute (GPUDECK_TOKEN_REQUESTS_PER_MINUTE) */
  tokenRequestsPerMinute: number;
  proxy: ProxyAuthConfig;
  alerts: AlertsConfig;
  /** Web Push to subscribed browsers (server/push/config.ts) */
  push: PushConfig;
  /** GPUDECK_STATUS_TOKEN: the status page is on with this token (never logged) */
  statusToken: string | null;
  /** Live streams of one user across all their sessions (GPUDECK_STREAMS_PER_USER). */
  streamsPerUser: number;
  /** Sessions one user may hold; the oldest ends first (GPUDECK_SESSIONS_PER_USER). */
  sessionsPerUser: number;
  /** Expensive queries per user a minute (GPUDECK_QUERIES_PER_MINUTE). */
  queriesPerMinute: number;
  /** Calls in one batched API request (GPUDECK_BATCH_MAX). */
  batchMax: number;
  /** Where the panel may connect (GPUDECK_EGRESS_ALLOW; never link-local or metadata addresses): ../egress/guard.ts */
  egress: EgressPolicy;
  /** GPUDECK_SECRET_KEY: the key for stored secrets (null: `<dataDir>/secret-key`; ../store/secretBox.ts) */
  secretKey: string | null;
  /** [panel.oidc]: single sign-on through an OpenID Connect provider; null when off */
  oidc: OidcConfig | null;
  /** Roles whose local accounts must use two-factor sign-in (GPUDECK_REQUIRE_2FA_FOR, panel.require_2fa_for) */
  requireTwoFactorFor: Role[];
}

export class PanelConfigError extends Error {}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

function list(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

function positive(env: Readonly<Record<string, string | undefined>>, name: string, fallback: number, unitMs: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback * unitMs;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new PanelConfigError(`${name} must be a positive number (got "${raw}")`);
  return n * unitMs;
}

/** A positive whole number (a count), or the fallback when unset. */
function whole(env: Readonly<Record<string, string | undefined>>, name: string, fallback: number): number {
  const n = positive(env, name, fallback, 1);
  if (!Number.isInteger(n)) throw new PanelConfigError(`${name} must be a whole number (got "${env[name]?.trim()}")`);
  return n;
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
}

function databaseUrl(value: string | undefined): string | null {
  const url = value?.trim();
  if (!url) return null;
  if (!/^postgres(ql)?:\/\//.test(url)) throw new PanelConfigError("GPUDECK_DATABASE_URL must be a postgres:// (or postgresql://) URL");
  return url;
}

/** The trusted proxy's shared secret, from GPUDECK_PROXY_SECRET_FILE or GPUDECK_PROXY_SECRET; null when neither is set. */
function proxySecret(env: Readonly<Record<string, string | undefined>>): string | null {
  const file = env.GPUDECK_PROXY_SECRET_FILE?.trim();
  if (file && env.GPUDECK_PROXY_SECRET !== undefined) throw new PanelConfigError("set GPUDECK_PROXY_SECRET or GPUDECK_PROXY_SECRET_FILE, not both");
  let secret: string | null = env.GPUDECK_PROXY_SECRET ?? null;
  let where = "GPUDECK_PROXY_SECRET";
  if (file) {
    where = `GPUDECK_PROXY_SECRET_FILE ${file}`;
    try {
      secret = readFileSync(/*turbopackIgnore: true*/ file, "utf8").replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
    } catch (err) {
      throw new PanelConfigError(`cannot read ${where}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  if (secret === null) return null;
  if (secret.length < 32 || !/^[\x21-\x7e]+$/.test(secret)) {
    throw new PanelConfigError(`${where}: the proxy secret must be at least 32 visible ASCII characters (e.g. openssl rand -base64 32)`);
  }
  return secret;
}

function alertsConfig(env: Readonly<Record<string, string | undefined>>): AlertsConfig {
  try {
    return loadAlertsConfig(env);
  } catch (err) {
    if (err instanceof AlertsConfigError) throw new PanelConfigError(err.message);
    throw err;
  }
}

function pushConfig(env: Readonly<Record<string, string | undefined>>): PushConfig {
  try {
    return loadPushConfig(env);
  } catch (err) {
    if (err instanceof PushConfigError) throw new PanelConfigError(err.message);
    throw err;
  }
}

function statusToken(value: string | undefined): string | null {
  const token = value?.trim();
  if (!token) return null;
  if (token.length < 16 || !/^[\x21-\x7e]+$/.test(token))
    throw new PanelConfigError("GPUDECK_STATUS_TOKEN must be at least 16 visible ASCII characters (e.g. openssl rand -hex 16)");
  return token;
}

function oidcConfig(env: Readonly<Record<string, string | undefined>>, publicUrl: string | null): OidcConfig | null {
  try {
    return loadOidcConfig(env, publicUrl);
  } catch (err) {
    if (err instanceof OidcConfigError) throw new PanelConfigError(err.message);
    throw err;
  }
}

export function loadPanelConfig(env: Readonly<Record<string, string | undefined>> = process.env): PanelConfig {
  const dataDir = path.resolve(/*turbopackIgnore: true*/ env.GPUDECK_DATA_DIR ?? ".data");
  let hosts: HostConfig[];
  try {
    hosts = loadHostsFromEnv(env, dataDir);
  } catch (err) {
    if (err instanceof HostsConfigError) throw new PanelConfigError(err.message);
    throw err;
  }
  const publicUrl = env.GPUDECK_PUBLIC_URL?.trim().replace(/\/+$/, "") || null;
  if (publicUrl && hostOf(publicUrl) === null) throw new PanelConfigError(`GPUDECK_PUBLIC_URL is not a URL: "${publicUrl}"`);
  const allowedOrigins = list(env.GPUDECK_ALLOWED_ORIGINS);
  if (publicUrl) allowedOrigins.push(new URL(publicUrl).origin);
  const allowedHosts = new Set<string>(list(env.GPUDECK_ALLOWED_HOSTS).map((h) => h.toLowerCase()));
  for (const origin of allowedOrigins) {
    const h = hostOf(origin);
    if (h) allowedHosts.add(h);
  }
  // The machine's own names: people open http://gpu-node-7:3000 without configuring anything.
  allowedHosts.add(osHostname().toLowerCase());
  if (env.HOSTNAME && !/^(0\.0\.0\.0|::)$/.test(env.HOSTNAME)) allowedHosts.add(env.HOSTNAME.toLowerCase());

  const proxyHeader = env.GPUDECK_PROXY_AUTH_HEADER?.trim().toLowerCase() || null;
  const defaultRole = env.GPUDECK_PROXY_DEFAULT_ROLE?.trim() || null;
  if (defaultRole !== null && !isRole(defaultRole)) throw new PanelConfigError("GPUDECK_PROXY_DEFAULT_ROLE must be viewer, operator or admin");
  const trustedProxies = list(env.GPUDECK_TRUSTED_PROXIES);
  try {
    trustedProxyList(trustedProxies);
  } catch (err) {
    throw new PanelConfigError(`GPUDECK_TRUSTED_PROXIES: ${(err as Error).message}`);
  }
  if (proxyHeader && trustedProxies.length === 0) {
    throw new PanelConfigError("GPUDECK_PROXY_AUTH_HEADER is set but GPUDECK_TRUSTED_PROXIES is empty: no proxy would be believed");
  }

  const secretHeader = env.GPUDECK_PROXY_SECRET_HEADER?.trim().toLowerCase() || undefined;
  if (secretHeader && !/^[a-z0-9-]+$/.test(secretHeader)) throw new PanelConfigError("GPUDECK_PROXY_SECRET_HEADER must be a header name");
  const secret = proxySecret(env);
  const ranges = trustedProxyRanges(trustedProxies);
  if (proxyHeader && secret === null && ranges.length > 0) {
    throw new PanelConfigError(
      `GPUDECK_TRUSTED_PROXIES trusts a range (${ranges.join(", ")}) for proxy sign-in (GPUDECK_PROXY_AUTH_HEADER) without GPUDECK_PROXY_SECRET: ` +
        `anyone in that range could send ${proxyHeader}: admin. Set GPUDECK_PROXY_SECRET (or GPUDECK_PROXY_SECRET_FILE) to a secret the proxy sends, ` +
        "or trust the proxy's single address instead of a range",
    );
  }

  return {
    hosts,
    databaseUrl: databaseUrl(env.GPUDECK_DATABASE_URL),
    dataDir,
    demo: /^(1|true|yes)$/i.test(env.GPUDECK_DEMO ?? ""),
    publicUrl,
    secureCookies: publicUrl?.startsWith("https:") ?? false,
    allowedOrigins: [...new Set(allowedOrigins)],
    allowedHosts: [...allowedHosts],
    sessionIdleMs: positive(env, "GPUDECK_SESSION_IDLE_MINUTES", 720, MINUTE),
    sessionMaxMs: positive(env, "GPUDECK_SESSION_MAX_HOURS", 168, HOUR),
    auditRetentionMs: positive(env, "GPUDECK_AUDIT_RETENTION_DAYS", 90, DAY),
    actionGuardMs: positive(env, "GPUDECK_ACTION_GUARD_SECONDS", 60, 1000),
    operatorMayKill: /^(1|true|yes)$/i.test(env.GPUDECK_OPERATOR_MAY_KILL ?? ""),
    viewerJournal: /^(1|true|yes)$/i.test(env.GPUDECK_VIEWER_JOURNAL ?? ""),
    streamsPerSession: positive(env, "GPUDECK_STREAMS_PER_SESSION", 16, 1),
    streamsMax: positive(env, "GPUDECK_STREAMS_MAX", 2_000, 1),
    tokenRequestsPerMinute: positive(env, "GPUDECK_TOKEN_REQUESTS_PER_MINUTE", 600, 1),
    proxy: {
      enabled: proxyHeader !== null,
      header: proxyHeader ?? "x-forwarded-user",
      trustedProxies,
      defaultRole: defaultRole as ProxyAuthConfig["defaultRole"],
      defaultUnitPatterns: list(env.GPUDECK_PROXY_DEFAULT_UNITS),
      secret,
      secretHeader,
    },
    alerts: alertsConfig(env),
    push: pushConfig(env),
    statusToken: statusToken(env.GPUDECK_STATUS_TOKEN),
    streamsPerUser: whole(env, "GPUDECK_STREAMS_PER_USER", 32),
    sessionsPerUser: whole(env, "GPUDECK_SESSIONS_PER_USER", 20),
    queriesPerMinute: whole(env, "GPUDECK_QUERIES_PER_MINUTE", 120),
    batchMax: whole(env, "GPUDECK_BATCH_MAX", 20),
    egress: egressPolicyOf(env),
    secretKey: env.GPUDECK_SECRET_KEY?.trim() || null,
    oidc: oidcConfig(env, publicUrl),
    requireTwoFactorFor: requiredTwoFactorRoles(env.GPUDECK_REQUIRE_2FA_FOR),
  };
}

function requiredTwoFactorRoles(value: string | undefined): Role[] {
  const roles = list(value);
  const wrong = roles.filter((r) => !isRole(r));
  if (wrong.length) throw new PanelConfigError(`GPUDECK_REQUIRE_2FA_FOR (panel.require_2fa_for): ${wrong.join(", ")} is not a role (viewer, operator, admin)`);
  return [...new Set(roles)] as Role[];
}

function egressPolicyOf(env: Readonly<Record<string, string | undefined>>): EgressPolicy {
  try {
    return egressPolicyFromEnv(env);
  } catch (err) {
    if (err instanceof EgressConfigError) throw new PanelConfigError(err.message);
    throw err;
  }
}
