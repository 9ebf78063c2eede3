#!/usr/bin/env node
/**
 * gpudeck, the installed command:
 *   gpudeck agent  [--config FILE] [agent flags]   the agent of a GPU host (server/agent/main.ts)
 *   gpudeck panel  [--config FILE]                 the web UI (server/panel/serve.ts, prebuilt .next)
 *   gpudeck doctor [--config FILE] [--agent|--panel]  checks this machine's setup
 *   gpudeck user   [--config FILE] add|passwd|disable|enable|set|list|setup-token …
 *   gpudeck units|restart|start|stop|logs …     drive a panel over its API with a token (server/cli/)
 * --config FILE (or GPUDECK_CONFIG) names the config file; without either, /etc/gpudeck/gpudeck.toml
 * is read when it exists (GPUDECK_CONFIG= set empty reads none). `gpudeck user` as root on a host
 * whose panel runs as the unit's dynamic user runs as that user (systemd-run), so the database
 * stays the panel's.
 *
 * Each command runs `node --import tsx <entry>` (tsx is a dependency) as a child process and exits
 * as the child does. SIGTERM and SIGHUP sent to this process are passed on (the units use
 * KillMode=mixed, so systemd signals only this process); Ctrl-C reaches the child from the
 * terminal itself, so SIGINT is not passed on twice.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { missingBuildLinks, restoreBuildLinks } from "./buildLinks.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DEFAULT_CONFIG = "/etc/gpudeck/gpudeck.toml";
const PANEL_STATE = "/var/lib/private/gpudeck-panel"; // the panel unit's StateDirectory with DynamicUser=yes
const ENTRIES = {
  agent: "server/agent/main.ts",
  panel: "server/panel/serve.ts",
  doctor: "scripts/doctor.ts",
  user: "scripts/user.ts",
};
/** Commands for a panel's API (GPUDECK_URL, GPUDECK_TOKEN): server/cli/main.ts takes the command too. */
const REMOTE = new Set(["units", "restart", "start", "stop", "logs"]);
const REMOTE_ENTRY = "server/cli/main.ts";
const USAGE = `usage: gpudeck <command> [arguments]
on the panel and GPU hosts (--config FILE: the config file; default $GPUDECK_CONFIG, else ${DEFAULT_CONFIG} when it exists):
  agent   run this GPU host's agent (flags and variables: README, "Configuration")
  panel   run the web UI
  doctor  check this machine's setup and say how to fix what is wrong (--agent, --panel)
  user    manage panel users: add | passwd | disable | enable | set | list | setup-token
anywhere, with GPUDECK_URL and an API token (GPUDECK_TOKEN or ~/.config/gpudeck/token):
  units [HOST]                                   units with state and readiness
  restart|start HOST:UNIT --reason TEXT [--when-gpus-free] [--wait serving|running] [--timeout 20m]
  stop HOST:UNIT --reason TEXT [--timeout 20m]   and follow until reached (exit 0/1/3, 4 refused)
  logs HOST:UNIT [-f] [--since 10m]
  gpudeck restart --help: the manual of these
  --version`;

function fail(message, code = 2) {
  process.stderr.write(`gpudeck: ${message}\n`);
  process.exit(code);
}

/** Take --config FILE / --config=FILE out of the arguments (the entries do not know it). */
function takeConfig(args) {
  const rest = [];
  let config;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") {
      rest.push(...args.slice(i));
      break;
    }
    if (a === "--config") {
      if (i + 1 >= args.length) fail("--config needs a file");
      config = args[++i];
    } else if (a.startsWith("--config=")) config = a.slice("--config=".length);
    else rest.push(a);
  }
  return { config, rest };
}

/**
 * The panel unit's database is in a state directory only its dynamic user may write (and only
 * inside a unit); root writing there would leave files the panel cannot open. So `gpudeck user`
 * as root runs as that user, with the unit's settings, through systemd-run. Null: run here.
 */
function asPanelUnit(rest, env) {
  if (process.getuid?.() !== 0 || env.GPUDECK_DATA_DIR !== undefined || !existsSync(PANEL_STATE)) return null;
  const props = ["DynamicUser=yes", "User=gpudeck-panel", "StateDirectory=gpudeck-panel", "EnvironmentFile=-/etc/gpudeck/panel.env"];
  const config = env.GPUDECK_CONFIG ? ["-E", `GPUDECK_CONFIG=${env.GPUDECK_CONFIG}`] : [];
  return [
    "systemd-run",
    "--quiet",
    "--wait",
    "--collect",
    process.stdin.isTTY ? "--pty" : "--pipe",
    ...props.flatMap((p) => ["-p", p]),
    "-E",
    "GPUDECK_DATA_DIR=/var/lib/gpudeck-panel",
    ...config,
    "--",
    process.execPath,
    fileURLToPath(import.meta.url),
    "user",
    ...rest,
  ];
}

/** The panel serves a prebuilt app: it must be there, with its links to the server packages. */
function checkPanelBuild() {
  if (!existsSync(path.join(root, ".next", "BUILD_ID"))) {
    fail(`there is no panel build in ${root}/.next: install a package made with \`npm run build && npm pack\`, or run \`npm run build\` in a checkout`, 1);
  }
  if (missingBuildLinks(root).length === 0) return;
  try {
    restoreBuildLinks(root);
  } catch (err) {
    fail(
      `the panel build's links in ${root}/.next/node_modules are missing and cannot be made here (${err.code ?? err.message}): run \`node ${root}/bin/buildLinks.js restore\` as the user who installed gpudeck (e.g. root), or reinstall it`,
      1,
    );
  }
}

const [command, ...args] = process.argv.slice(2);
if (command === "--version" || command === "-v") {
  process.stdout.write(`${JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).version}\n`);
  process.exit(0);
}
if (!command || command === "help" || command === "--help" || command === "-h") {
  process.stdout.write(`${USAGE}\n`);
  process.exit(command ? 0 : 2);
}
const remote = REMOTE.has(command);
const entry = remote ? REMOTE_ENTRY : ENTRIES[command];
if (!entry) fail(`unknown command "${command}"\n${USAGE}`);

const { config, rest } = remote ? { config: undefined, rest: [command, ...args] } : takeConfig(args);
const env = { ...process.env };
if (config !== undefined) env.GPUDECK_CONFIG = path.resolve(config);
else if (env.GPUDECK_CONFIG === undefined && existsSync(DEFAULT_CONFIG)) env.GPUDECK_CONFIG = DEFAULT_CONFIG;
if (command === "panel") {
  checkPanelBuild();
  env.NEXT_TELEMETRY_DISABLED ??= "1";
}

// tsx from this package's own dependencies, whatever the working directory
const [file, ...argv] = (command === "user" && asPanelUnit(rest, env)) || [
  process.execPath,
  "--import",
  import.meta.resolve("tsx"),
  path.join(root, entry),
  ...rest,
];
const child = spawn(file, argv, { stdio: "inherit", env });
for (const signal of ["SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (child.exitCode === null) child.kill(signal);
  });
}
process.on("SIGINT", () => {}); // wait for the child, which got it too
child.on("error", (err) => fail(`cannot start ${file}: ${err.message}`, 1));
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal); // end the same way, so a caller sees the signal
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
