/**
 * Agent configuration from flags and environment. Flags win over environment.
 *   --listen HOST:PORT   GPUDECK_AGENT_LISTEN   (default 127.0.0.1:9300)
 *   --token-file FILE    GPUDECK_AGENT_TOKEN_FILE (a file holding the bearer token)
 *                        GPUDECK_AGENT_TOKEN    (the token itself; no flag: argv shows in `ps`)
 *                        default: <data dir>/agent-token, created on first start. At least 32 characters.
 *   --units GLOBS        GPUDECK_UNITS          (comma-separated; no default: controls nothing without it)
 *   --nvidia-smi PATH    GPUDECK_NVIDIA_SMI     (default "nvidia-smi" on PATH)
 *   --data-dir DIR       GPUDECK_DATA_DIR       (default ./.data)
 *   --simulate           GPUDECK_SIMULATE=1
 *   --gpu-interval-ms N  GPUDECK_GPU_INTERVAL_MS (default 1000)
 *   --tls-cert FILE      GPUDECK_AGENT_TLS_CERT  and --tls-key FILE GPUDECK_AGENT_TLS_KEY: serve HTTPS (PEM files)
 *                        GPUDECK_AGENT_INSECURE_HTTP=1: serve plain HTTP off loopback anyway (refused otherwise)
 *   --crash-loop N/M     GPUDECK_CRASH_LOOP     (N restarts within M make a crash loop; default 5/10m)
 *   --journalctl PATH    GPUDECK_JOURNALCTL     (journalctl for the kernel log's GPU faults; default "journalctl")
 *   GPUDECK_READINESS (JSON) or GPUDECK_READINESS_FILE (a JSON file): per-unit readiness overrides
 *                        ({ "unit-or-glob": { engine, probeUrl, probe, healAfter, healMax } }, see readiness/config.ts)
 *   Simulated hosts only: GPUDECK_SIM_PROFILE (incident | healthy | fleet), GPUDECK_SIM_HOSTNAME
 *   (the machine name the agent reports), GPUDECK_SIM_SPEED (time factor), GPUDECK_SIM_DRAIN_S (a killed
 *   process's memory drains in this many simulated seconds; default 30)
 */
import { parseArgs } from "node:util";
import path from "node:path";
import { agentTokenProblem } from "../contract/agentToken";
import { parseUnitGlobs } from "../contract/unitNames";
import { SIM_PROFILES, type SimProfile } from "./simulator/profiles";
import { parseCrashLoopRule, type CrashLoopRule } from "./crashLoop/rule";
import { loadReadinessConfig, ReadinessConfigError, type ReadinessConfig } from "./readiness/config";

export interface AgentConfig {
  host: string;
  port: number;
  token: string | null;
  /** a file holding the token (GPUDECK_AGENT_TOKEN_FILE, --token-file); read at start */
  tokenFile?: string | null;
  unitGlobs: string[];
  nvidiaSmiPath: string;
  dataDir: string;
  simulate: boolean;
  gpuIntervalMs: number;
  /** simulated hosts: which one to play, and the machine name to report */
  simProfile?: SimProfile;
  simHostname?: string;
  /** simulated hosts: keep the history store in dataDir as a real host does (bench/unit-draw.ts fills it with a day first); off: a simulated host starts afresh */
  simHistory?: boolean;
  /** serve HTTPS with these PEM files (null: plain HTTP, for loopback) */
  tls?: AgentTlsFiles | null;
  /** GPUDECK_AGENT_INSECURE_HTTP=1: plain HTTP off loopback is wanted (a network the owner trusts) */
  insecureHttp?: boolean;
  /** N restarts within M minutes make a crash loop (default 5/10m) */
  crashLoopRule?: CrashLoopRule;
  /** journalctl for the kernel log (GPU faults) */
  journalctlPath?: string;
  /** per-unit readiness overrides (GPUDECK_READINESS, GPUDECK_READINESS_FILE); none when absent */
  readiness?: ReadinessConfig;
}

export class ConfigError extends Error {}

/** PEM files the agent serves HTTPS with. */
export interface AgentTlsFiles {
  certFile: string;
  keyFile: string;
}

/** Both TLS files or neither; paths resolved. */
export function tlsFiles(certFile: string | undefined, keyFile: string | undefined): AgentTlsFiles | null {
  const cert = certFile?.trim() || null;
  const key = keyFile?.trim() || null;
  if (!cert && !key) return null;
  if (!cert || !key) throw new ConfigError("TLS needs both GPUDECK_AGENT_TLS_CERT (--tls-cert) and GPUDECK_AGENT_TLS_KEY (--tls-key)");
  return { certFile: path.resolve(cert), keyFile: path.resolve(key) };
}

export function parseListen(spec: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(spec.trim());
  if (!m) throw new ConfigError(`GPUDECK_AGENT_LISTEN must be HOST:PORT (got "${spec}")`);
  const port = Number(m[2]);
  if (port > 65535) throw new ConfigError(`port ${port} is out of range`);
  return { host: m[1]!.replace(/^\[|\]$/g, ""), port };
}

function truthy(v: string | undefined): boolean {
  return v !== undefined && /^(1|true|yes|on)$/i.test(v);
}

export function loadAgentConfig(argv: string[], env: Readonly<Record<string, string | undefined>>): AgentConfig {
  const { values } = parseArgs({
    args: argv,
    options: {
      listen: { type: "string" },
      token: { type: "string" },
      "token-file": { type: "string" },
      units: { type: "string" },
      "nvidia-smi": { type: "string" },
      "data-dir": { type: "string" },
      simulate: { type: "boolean" },
      "gpu-interval-ms": { type: "string" },
      "tls-cert": { type: "string" },
      "tls-key": { type: "string" },
      "crash-loop": { type: "string" },
      journalctl: { type: "string" },
    },
    strict: true,
  });
  const { host, port } = parseListen(values.listen ?? env.GPUDECK_AGENT_LISTEN ?? "127.0.0.1:9300");
  const interval = Number(values["gpu-interval-ms"] ?? env.GPUDECK_GPU_INTERVAL_MS ?? 1000);
  if (!Number.isFinite(interval) || interval < 100 || interval > 60_000) {
    throw new ConfigError("GPUDECK_GPU_INTERVAL_MS must be between 100 and 60000");
  }
  if (values.token !== undefined) {
    throw new ConfigError("--token would show the token to every local user (ps); use --token-file FILE or GPUDECK_AGENT_TOKEN instead");
  }
  const token = env.GPUDECK_AGENT_TOKEN ?? null;
  const tokenFile = values["token-file"] ?? (env.GPUDECK_AGENT_TOKEN_FILE?.trim() || null);
  if (token !== null && tokenFile !== null) throw new ConfigError("set GPUDECK_AGENT_TOKEN or a token file (GPUDECK_AGENT_TOKEN_FILE, --token-file), not both");
  if (token !== null) {
    const problem = agentTokenProblem(token);
    if (problem) {
      const unset = token === "" ? " (it is set but empty: unset it to use the token file in the data dir)" : "";
      throw new ConfigError(`GPUDECK_AGENT_TOKEN: ${problem}${unset}`);
    }
  }
  const profile = env.GPUDECK_SIM_PROFILE?.trim() || undefined;
  if (profile !== undefined && !(SIM_PROFILES as readonly string[]).includes(profile)) {
    throw new ConfigError(`GPUDECK_SIM_PROFILE must be one of ${SIM_PROFILES.join(", ")} (got "${profile}")`);
  }
  let crashLoopRule: CrashLoopRule;
  try {
    crashLoopRule = parseCrashLoopRule(values["crash-loop"] ?? env.GPUDECK_CRASH_LOOP);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  return {
    host,
    port,
    token,
    tokenFile: tokenFile === null ? null : path.resolve(tokenFile),
    unitGlobs: parseUnitGlobs(values.units ?? env.GPUDECK_UNITS),
    nvidiaSmiPath: values["nvidia-smi"] ?? env.GPUDECK_NVIDIA_SMI ?? "nvidia-smi",
    dataDir: path.resolve(values["data-dir"] ?? env.GPUDECK_DATA_DIR ?? ".data"),
    simulate: values.simulate === true || truthy(env.GPUDECK_SIMULATE),
    gpuIntervalMs: interval,
    simProfile: profile as SimProfile | undefined,
    simHostname: env.GPUDECK_SIM_HOSTNAME?.trim() || undefined,
    tls: tlsFiles(values["tls-cert"] ?? env.GPUDECK_AGENT_TLS_CERT, values["tls-key"] ?? env.GPUDECK_AGENT_TLS_KEY),
    insecureHttp: truthy(env.GPUDECK_AGENT_INSECURE_HTTP),
    crashLoopRule,
    journalctlPath: values.journalctl ?? (env.GPUDECK_JOURNALCTL?.trim() || "journalctl"),
    readiness: readinessConfig(env),
  };
}

/** GPUDECK_READINESS / GPUDECK_READINESS_FILE: per-unit engine, probe URL, probes off (./readiness/config.ts). */
function readinessConfig(env: Readonly<Record<string, string | undefined>>): ReadinessConfig {
  try {
    return loadReadinessConfig(env);
  } catch (err) {
    if (err instanceof ReadinessConfigError) throw new ConfigError(err.message);
    throw err;
  }
}
