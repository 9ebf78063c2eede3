/**
 * `gpudeck doctor [--agent] [--panel] [--config FILE]` (also `npm run doctor`): runs the checks,
 * prints one line per finding with how to fix it, and exits 1 when any check found an error
 * (warnings alone exit 0), 2 on bad usage.
 */
import { parseArgs } from "node:util";
import type { Role } from "../config/settings";
import { runDoctor, type DoctorDeps, type DoctorReport } from "./doctor";
import { busSystemdProbe, currentIdentity, httpGet, httpGetForAgentTls, systemFiles, systemRunner, withProcessOf } from "./system";
import type { CheckStatus } from "./types";

const USAGE = `usage: gpudeck doctor [--agent] [--panel] [--config FILE]
  --agent   only the checks for a GPU host's agent (systemd, units, nvidia-smi, journal, data dir)
  --panel   only the checks for the panel (data dir, each agent's reachability and token, public URL)
  --config  the config file (default: $GPUDECK_CONFIG)
Without --agent/--panel: the roles the config file configures, or both.`;

const LABEL: Record<CheckStatus, string> = { ok: "ok   ", warn: "WARN ", error: "ERROR", skip: "skip " };

export function formatReport(report: DoctorReport): string {
  const lines: string[] = [
    `gpudeck doctor: ${report.roles.join(" + ") || "config"} checks${report.configFile ? `, config ${report.configFile}` : ", no config file"}`,
  ];
  const width = Math.max(...report.results.map((r) => r.id.length), 10);
  for (const r of report.results) {
    const [first, ...more] = r.detail.split("\n");
    lines.push(`${LABEL[r.status]}  ${r.id.padEnd(width)}  ${first}`);
    for (const m of more) lines.push(`${" ".repeat(width + 9)}${m}`);
    if (r.fix && (r.status === "error" || r.status === "warn")) lines.push(`${" ".repeat(width + 9)}fix: ${r.fix}`);
  }
  const count = (s: CheckStatus) => report.results.filter((r) => r.status === s).length;
  const errors = count("error");
  const warnings = count("warn");
  lines.push(`${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"}, ${count("ok")} ok`);
  return lines.join("\n") + "\n";
}

export function realDoctorDeps(env: NodeJS.ProcessEnv = process.env): DoctorDeps {
  return {
    env: { ...env },
    runner: systemRunner,
    systemd: () => busSystemdProbe(),
    files: systemFiles,
    http: httpGet,
    httpForTls: httpGetForAgentTls,
    identity: currentIdentity(),
    withProcessOf,
  };
}

export async function runDoctorCli(
  argv: string[],
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream },
  deps: DoctorDeps = realDoctorDeps(),
): Promise<number> {
  let values: { agent?: boolean; panel?: boolean; config?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { agent: { type: "boolean" }, panel: { type: "boolean" }, config: { type: "string" }, help: { type: "boolean", short: "h" } },
      strict: true,
    }));
  } catch (err) {
    io.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const roles: Role[] = [];
  if (values.agent) roles.push("agent");
  if (values.panel) roles.push("panel");
  const report = await runDoctor(deps, { configFile: values.config, roles: roles.length ? roles : undefined });
  io.stdout.write(formatReport(report));
  return report.results.some((r) => r.status === "error") ? 1 : 0;
}
