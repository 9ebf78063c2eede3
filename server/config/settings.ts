/**
 * The mapping table: every key of the gpudeck config file and the GPUDECK_* environment variable it
 * stands for. The file only supplies defaults for those variables; the environment overrides them,
 * and the existing loaders (server/agent/config.ts, server/panel/config.ts, …) stay the one place
 * that validates each value. A setting someone adds to a loader needs one line here (and one in
 * deploy/gpudeck.example.toml); envNames.test.ts fails until it has it, or until the variable is
 * listed in NOT_IN_FILE with the reason it does not belong in a config file.
 *
 * `kind` is the value's shape in TOML and how it becomes the variable's text:
 *   string   as written             path     relative paths resolve against the config file's folder
 *   command  a path when it has "/", else a name looked up on PATH
 *   number   a TOML number          boolean  true → "1", false → "0"
 *   list     array of strings, joined with ","
 *   listen   "HOST:PORT", split into two variables (the panel's HOSTNAME and PORT)
 *   table    a TOML table, passed on as JSON text (for loaders that take JSON, with their own keys)
 *   tables   an array of tables ([[alerts.channels]]), passed on as a JSON list
 */

export type Role = "agent" | "panel";

export type SettingKind = "string" | "path" | "command" | "number" | "boolean" | "list" | "listen" | "table" | "tables";

export interface Setting {
  /** dotted path in the file, e.g. "agent.listen" */
  key: string;
  /** the variable it sets; for kind "listen", [host variable, port variable] */
  env: string | readonly [string, string];
  kind: SettingKind;
  /** the processes that read it */
  role: Role;
  /**
   * Variables that, when any is in the environment, override this setting as a whole (default: its
   * own). E.g. GPUDECK_AGENT_TOKEN in the environment replaces a token_file from the file instead of
   * clashing with it.
   */
  overriddenBy?: readonly string[];
}

const AGENT_TOKEN_VARS = ["GPUDECK_AGENT_TOKEN", "GPUDECK_AGENT_TOKEN_FILE"] as const;
const READINESS_VARS = ["GPUDECK_READINESS", "GPUDECK_READINESS_FILE"] as const;
const PROXY_SECRET_VARS = ["GPUDECK_PROXY_SECRET", "GPUDECK_PROXY_SECRET_FILE"] as const;
/** The ways the panel is told its agents; the environment's choice wins over the file's. */
export const HOSTS_VARS = ["GPUDECK_AGENTS_JSON", "GPUDECK_AGENTS_FILE", "GPUDECK_AGENT_URL"] as const;

export const SETTINGS: readonly Setting[] = [
  { key: "agent.units", env: "GPUDECK_UNITS", kind: "list", role: "agent" },
  { key: "agent.listen", env: "GPUDECK_AGENT_LISTEN", kind: "string", role: "agent" },
  { key: "agent.token_file", env: "GPUDECK_AGENT_TOKEN_FILE", kind: "path", role: "agent", overriddenBy: AGENT_TOKEN_VARS },
  { key: "agent.token", env: "GPUDECK_AGENT_TOKEN", kind: "string", role: "agent", overriddenBy: AGENT_TOKEN_VARS },
  { key: "agent.tls_cert", env: "GPUDECK_AGENT_TLS_CERT", kind: "path", role: "agent" },
  { key: "agent.tls_key", env: "GPUDECK_AGENT_TLS_KEY", kind: "path", role: "agent" },
  { key: "agent.nvidia_smi", env: "GPUDECK_NVIDIA_SMI", kind: "command", role: "agent" },
  { key: "agent.gpu_interval_ms", env: "GPUDECK_GPU_INTERVAL_MS", kind: "number", role: "agent" },
  { key: "agent.data_dir", env: "GPUDECK_DATA_DIR", kind: "path", role: "agent" },
  { key: "agent.crash_loop", env: "GPUDECK_CRASH_LOOP", kind: "string", role: "agent" },
  { key: "agent.journalctl", env: "GPUDECK_JOURNALCTL", kind: "command", role: "agent" },
  { key: "agent.probes_file", env: "GPUDECK_READINESS_FILE", kind: "path", role: "agent", overriddenBy: READINESS_VARS },
  { key: "probes", env: "GPUDECK_READINESS", kind: "table", role: "agent", overriddenBy: READINESS_VARS },

  { key: "panel.listen", env: ["HOSTNAME", "PORT"], kind: "listen", role: "panel" },
  { key: "panel.data_dir", env: "GPUDECK_DATA_DIR", kind: "path", role: "panel" },
  { key: "panel.database_url", env: "GPUDECK_DATABASE_URL", kind: "string", role: "panel" },
  { key: "panel.public_url", env: "GPUDECK_PUBLIC_URL", kind: "string", role: "panel" },
  { key: "panel.allowed_hosts", env: "GPUDECK_ALLOWED_HOSTS", kind: "list", role: "panel" },
  { key: "panel.allowed_origins", env: "GPUDECK_ALLOWED_ORIGINS", kind: "list", role: "panel" },
  { key: "panel.agents_file", env: "GPUDECK_AGENTS_FILE", kind: "path", role: "panel", overriddenBy: HOSTS_VARS },
  { key: "panel.action_guard_seconds", env: "GPUDECK_ACTION_GUARD_SECONDS", kind: "number", role: "panel" },
  { key: "panel.operator_may_kill", env: "GPUDECK_OPERATOR_MAY_KILL", kind: "boolean", role: "panel" },
  { key: "panel.viewer_journal", env: "GPUDECK_VIEWER_JOURNAL", kind: "boolean", role: "panel" },
  { key: "panel.streams_per_session", env: "GPUDECK_STREAMS_PER_SESSION", kind: "number", role: "panel" },
  { key: "panel.streams_max", env: "GPUDECK_STREAMS_MAX", kind: "number", role: "panel" },
  { key: "panel.streams_per_user", env: "GPUDECK_STREAMS_PER_USER", kind: "number", role: "panel" },
  { key: "panel.queries_per_minute", env: "GPUDECK_QUERIES_PER_MINUTE", kind: "number", role: "panel" },
  { key: "panel.batch_max", env: "GPUDECK_BATCH_MAX", kind: "number", role: "panel" },
  { key: "panel.token_requests_per_minute", env: "GPUDECK_TOKEN_REQUESTS_PER_MINUTE", kind: "number", role: "panel" },
  { key: "panel.egress_allow", env: "GPUDECK_EGRESS_ALLOW", kind: "list", role: "panel" },
  { key: "panel.session.idle_minutes", env: "GPUDECK_SESSION_IDLE_MINUTES", kind: "number", role: "panel" },
  { key: "panel.session.max_hours", env: "GPUDECK_SESSION_MAX_HOURS", kind: "number", role: "panel" },
  { key: "panel.session.max_per_user", env: "GPUDECK_SESSIONS_PER_USER", kind: "number", role: "panel" },
  { key: "panel.require_2fa_for", env: "GPUDECK_REQUIRE_2FA_FOR", kind: "list", role: "panel" },
  { key: "panel.proxy_auth.header", env: "GPUDECK_PROXY_AUTH_HEADER", kind: "string", role: "panel" },
  { key: "panel.proxy_auth.trusted_proxies", env: "GPUDECK_TRUSTED_PROXIES", kind: "list", role: "panel" },
  { key: "panel.proxy_auth.default_role", env: "GPUDECK_PROXY_DEFAULT_ROLE", kind: "string", role: "panel" },
  { key: "panel.proxy_auth.default_units", env: "GPUDECK_PROXY_DEFAULT_UNITS", kind: "list", role: "panel" },
  { key: "panel.proxy_auth.secret_file", env: "GPUDECK_PROXY_SECRET_FILE", kind: "path", role: "panel", overriddenBy: PROXY_SECRET_VARS },
  { key: "panel.proxy_auth.secret", env: "GPUDECK_PROXY_SECRET", kind: "string", role: "panel", overriddenBy: PROXY_SECRET_VARS },
  { key: "panel.proxy_auth.secret_header", env: "GPUDECK_PROXY_SECRET_HEADER", kind: "string", role: "panel" },

  { key: "panel.oidc.issuer", env: "GPUDECK_OIDC_ISSUER", kind: "string", role: "panel" },
  { key: "panel.oidc.client_id", env: "GPUDECK_OIDC_CLIENT_ID", kind: "string", role: "panel" },
  { key: "panel.oidc.client_secret_env", env: "GPUDECK_OIDC_CLIENT_SECRET_ENV", kind: "string", role: "panel" },
  { key: "panel.oidc.name", env: "GPUDECK_OIDC_NAME", kind: "string", role: "panel" },
  { key: "panel.oidc.scopes", env: "GPUDECK_OIDC_SCOPES", kind: "list", role: "panel" },
  { key: "panel.oidc.username_claim", env: "GPUDECK_OIDC_USERNAME_CLAIM", kind: "string", role: "panel" },
  { key: "panel.oidc.groups_claim", env: "GPUDECK_OIDC_GROUPS_CLAIM", kind: "string", role: "panel" },
  { key: "panel.oidc.local_login", env: "GPUDECK_OIDC_LOCAL_LOGIN", kind: "boolean", role: "panel" },
  { key: "panel.oidc.roles", env: "GPUDECK_OIDC_ROLES", kind: "tables", role: "panel" },
  { key: "panel.maintenance", env: "GPUDECK_MAINTENANCE", kind: "tables", role: "panel" },

  { key: "alerts.webhook_url", env: "GPUDECK_ALERT_WEBHOOK_URL", kind: "string", role: "panel" },
  { key: "alerts.rules", env: "GPUDECK_ALERT_RULES", kind: "table", role: "panel" },
  { key: "alerts.channels", env: "GPUDECK_ALERT_CHANNELS", kind: "tables", role: "panel" },
  { key: "alerts.group_seconds", env: "GPUDECK_ALERT_GROUP_SECONDS", kind: "number", role: "panel" },
  { key: "alerts.retry_hours", env: "GPUDECK_ALERT_RETRY_HOURS", kind: "number", role: "panel" },
  { key: "alerts.rate_per_minute", env: "GPUDECK_ALERT_RATE_PER_MINUTE", kind: "number", role: "panel" },

  { key: "panel.push.enabled", env: "GPUDECK_PUSH", kind: "boolean", role: "panel" },
  { key: "panel.push.subject", env: "GPUDECK_PUSH_SUBJECT", kind: "string", role: "panel" },
  { key: "panel.push.groups", env: "GPUDECK_PUSH_GROUPS", kind: "table", role: "panel" },

  { key: "status_page.token", env: "GPUDECK_STATUS_TOKEN", kind: "string", role: "panel" },

  { key: "retention.audit_days", env: "GPUDECK_AUDIT_RETENTION_DAYS", kind: "number", role: "panel" },
];

/** [[hosts]]: the panel's agents, given to the panel as GPUDECK_AGENTS_JSON (see hosts.ts). */
export const HOSTS_KEY = "hosts";
export const HOSTS_ENV = "GPUDECK_AGENTS_JSON";

/** Variables that have no key in the file, and why. */
export const NOT_IN_FILE: Readonly<Record<string, string>> = {
  GPUDECK_CONFIG: "names the config file itself",
  GPUDECK_AGENT_URL: "one agent by environment; the file lists agents as [[hosts]]",
  GPUDECK_AGENT_NAME: "goes with GPUDECK_AGENT_URL",
  GPUDECK_AGENT_CA_FILE: "goes with GPUDECK_AGENT_URL ([[hosts]] have ca_file)",
  GPUDECK_AGENT_FINGERPRINT: "goes with GPUDECK_AGENT_URL ([[hosts]] have fingerprint)",
  GPUDECK_SIMULATE: "simulated hosts are for the demo and tests",
  GPUDECK_SIM_PROFILE: "simulator only",
  GPUDECK_SIM_HOSTNAME: "simulator only",
  GPUDECK_SIM_SPEED: "simulator only",
  GPUDECK_SIM_DRAIN_S: "simulator only",
  GPUDECK_DEMO: "set by npm run demo",
  GPUDECK_DEMO_HOSTS: "npm run demo only",
  GPUDECK_DEMO_FLAKY_UP_S: "npm run demo only",
  GPUDECK_DEMO_FLAKY_DOWN_S: "npm run demo only",
  GPUDECK_DIST_DIR: "a second build folder for test runs",
  GPUDECK_TOKEN_GPU_A: "an example name for a token_env variable",
  GPUDECK_INTERACTIVE: "set by npm start / npm run panel: whether their output is a terminal",
  GPUDECK_SECRET_KEY: "a secret: kept in panel.env, or the key file <data dir>/secret-key made at first start",
  GPUDECK_AGENT_INSECURE_HTTP:
    "a deliberate exception, set in the environment: on the agent it allows plain HTTP off loopback; on the panel it goes with GPUDECK_AGENT_URL ([[hosts]] have insecure_http)",
  GPUDECK_URL: "the gpudeck command's panel address, a setting of the machine that runs the command",
  GPUDECK_TOKEN: "the gpudeck command's API token (a secret; or ~/.config/gpudeck/token)",
  GPUDECK_PUSH_ALLOW_HTTP_LOOPBACK: "tests only: lets a local push service on plain http at 127.0.0.1 be subscribed",
  GPUDECK_OIDC_CLIENT_SECRET: "a secret: kept in panel.env (panel.oidc.client_secret_env names the variable)",
};

export function envNamesOf(setting: Setting): readonly string[] {
  return typeof setting.env === "string" ? [setting.env] : setting.env;
}
