/**
 * `gpudeck doctor`: reads the configuration the way the agent and the panel will (config file,
 * then environment, then their own loaders), and runs the checks that apply to this machine.
 * Agent checks: system bus and systemd version, unit globs, permission to manage the units,
 * nvidia-smi and its sample time, persistence mode, the journal, the data dir. Panel checks: the
 * data dir, each agent's reachability and token, the public URL. Both: the config file itself.
 */
import { loadAgentConfig } from "../agent/config";
import { plainHttpRefusal } from "../agent/listen";
import { loadPanelConfig } from "../panel/config";
import { applyConfigFile, explainWithConfig, readConfigFile, type AppliedConfig, type Env } from "../config/configFile";
import type { Role } from "../config/settings";
import type { AgentTls } from "../panel/tlsPin";
import { checkAgent } from "./checks/agents";
import { checkConfigPrivacy, checkDataDir, checkTlsPair } from "./checks/files";
import { checkNvidiaSmi, checkPersistenceMode } from "./checks/gpu";
import { checkJournal } from "./checks/journal";
import { checkOidc } from "./checks/oidc";
import { checkPublicUrl } from "./checks/panelUrl";
import { checkPush } from "./checks/push";
import { checkSystemBus, checkUnitGlobs } from "./checks/systemd";
import { checkUnitControl } from "./checks/unitControl";
import { secretKeysIn } from "./secrets";
import type { CheckResult, FilesPort, HttpGet, Identity, Runner, SystemdProbe, WithProcessOf } from "./types";

export interface DoctorDeps {
  env: Env;
  runner: Runner;
  systemd: () => SystemdProbe;
  files: FilesPort;
  http: HttpGet;
  /** GET for an https agent whose certificate is checked against its ca_file or pinned fingerprint */
  httpForTls: (tls: AgentTls) => HttpGet;
  identity: Identity;
  withProcessOf: WithProcessOf;
}

export interface DoctorOptions {
  /** the config file (default: env.GPUDECK_CONFIG) */
  configFile?: string;
  /** which checks; default: what the config file configures, else both */
  roles?: Role[];
}

export interface DoctorReport {
  configFile: string | null;
  roles: Role[];
  results: CheckResult[];
}

/** Both roles, unless a config file configures only one of them. */
function rolesFor(values: Record<string, unknown> | null): Role[] {
  if (!values) return ["agent", "panel"];
  const roles: Role[] = [];
  if (values.agent !== undefined || values.probes !== undefined) roles.push("agent");
  if (["panel", "hosts", "alerts", "status_page", "retention"].some((k) => values[k] !== undefined)) roles.push("panel");
  return roles.length ? roles : ["agent", "panel"];
}

async function agentChecks(deps: DoctorDeps, env: Env, applied: AppliedConfig | null): Promise<CheckResult[]> {
  let config: ReturnType<typeof loadAgentConfig>;
  try {
    config = loadAgentConfig([], env);
  } catch (err) {
    return [
      {
        id: "agent config",
        status: "error",
        detail: explainWithConfig((err as Error).message, applied),
        fix: "fix the setting; the agent will not start with it",
      },
    ];
  }
  const out: CheckResult[] = [];
  const probe = deps.systemd();
  try {
    const bus = await checkSystemBus(probe);
    out.push(bus);
    let units: string[] = [];
    if (bus.status !== "error") {
      const globs = await checkUnitGlobs(probe, config.unitGlobs);
      out.push(...globs.result);
      units = globs.units;
      out.push(await checkUnitControl({ runner: deps.runner, identity: deps.identity, probe, withProcessOf: deps.withProcessOf }, globs.samples));
    } else {
      out.push({ id: "units", status: "skip", detail: "needs the system bus" }, { id: "unit control", status: "skip", detail: "needs the system bus" });
    }
    const smi = await checkNvidiaSmi(deps.runner, config.nvidiaSmiPath);
    out.push(smi.result);
    if (smi.ran) out.push(await checkPersistenceMode(deps.runner, config.nvidiaSmiPath));
    out.push(await checkJournal(deps.runner, config.journalctlPath ?? "journalctl", deps.identity, units[0]));
  } finally {
    await probe.close();
  }
  out.push(await checkDataDir(deps.files, config.dataDir, "agent"));
  out.push(await agentTls(deps, config));
  return out;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** The agent's TLS files when it serves HTTPS; plain HTTP is fine on loopback only. */
async function agentTls(deps: DoctorDeps, config: ReturnType<typeof loadAgentConfig>): Promise<CheckResult> {
  // `tls` (GPUDECK_AGENT_TLS_CERT/KEY) is read loosely: older agent configs have no such field
  const tls = (config as { tls?: { certFile: string; keyFile: string } | null }).tls;
  if (tls) return checkTlsPair(deps.files, "agent", tls.certFile, tls.keyFile);
  if (LOOPBACK.test(config.host)) return { id: "TLS (agent)", status: "ok", detail: `plain HTTP on ${config.host} (loopback only)` };
  const fix = "set agent.tls_cert and agent.tls_key (GPUDECK_AGENT_TLS_CERT/KEY) and give the panel https:// URLs";
  const refusal = plainHttpRefusal(config);
  if (refusal) return { id: "TLS (agent)", status: "error", detail: refusal, fix: `${fix}, or set GPUDECK_AGENT_INSECURE_HTTP=1 on a network you trust` };
  return {
    id: "TLS (agent)",
    status: "warn",
    detail: `the agent listens on ${config.host} over plain HTTP (GPUDECK_AGENT_INSECURE_HTTP=1): its bearer token travels in clear`,
    fix: `${fix}, or keep the network private`,
  };
}

async function panelChecks(deps: DoctorDeps, env: Env, applied: AppliedConfig | null): Promise<CheckResult[]> {
  let config: ReturnType<typeof loadPanelConfig>;
  try {
    config = loadPanelConfig(env);
  } catch (err) {
    return [
      {
        id: "panel config",
        status: "error",
        detail: explainWithConfig((err as Error).message, applied),
        fix: "fix the setting; the panel will not start with it",
      },
    ];
  }
  const out: CheckResult[] = [];
  if (config.databaseUrl === null) out.push(await checkDataDir(deps.files, config.dataDir, "panel"));
  out.push(checkPublicUrl(config.publicUrl, env.HOSTNAME ?? "127.0.0.1"));
  out.push(checkPush(config.push, config.publicUrl));
  if (config.oidc) out.push(...(await checkOidc(deps.http, config.oidc)));
  const checks = await Promise.all(config.hosts.map((h) => checkAgent(h.tls ? deps.httpForTls(h.tls) : deps.http, h)));
  out.push(...checks);
  if (config.hosts.length === 0) out.push({ id: "agents", status: "warn", detail: "no agents configured (hosts can still be added on the Hosts page)" });
  return out;
}

export async function runDoctor(deps: DoctorDeps, opts: DoctorOptions = {}): Promise<DoctorReport> {
  const file = opts.configFile ?? deps.env.GPUDECK_CONFIG?.trim() ?? null;
  const results: CheckResult[] = [];
  let values: Record<string, unknown> | null = null;
  if (file) {
    try {
      const config = readConfigFile(file);
      values = config.values;
      results.push({ id: "config file", status: "ok", detail: `${config.file} is valid` });
      results.push(await checkConfigPrivacy(deps.files, config.file, secretKeysIn(config.values)));
    } catch (err) {
      results.push({ id: "config file", status: "error", detail: (err as Error).message, fix: "every key is described in deploy/gpudeck.example.toml" });
      return { configFile: file, roles: opts.roles ?? [], results };
    }
  }
  const roles = opts.roles ?? rolesFor(values);
  for (const role of roles) {
    const env: Env = { ...deps.env };
    let applied: AppliedConfig | null = null;
    try {
      applied = file ? applyConfigFile(env, role, file) : null;
    } catch (err) {
      results.push({ id: `${role} config`, status: "error", detail: (err as Error).message });
      continue;
    }
    results.push(...(role === "agent" ? await agentChecks(deps, env, applied) : await panelChecks(deps, env, applied)));
  }
  return { configFile: file, roles, results };
}
