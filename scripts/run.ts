/**
 * Starts gpudeck: an agent and the panel, as two processes.
 *   npm run demo    three simulated hosts, no login, demo banner   (http://127.0.0.1:3000;
 *                   GPUDECK_DEMO_HOSTS=N for more)
 *   npm start       this host: systemd over D-Bus and nvidia-smi   (login required)
 *   npm run panel   the panel alone, for an agent that runs elsewhere (GPUDECK_AGENT_URL)
 * Builds the panel first when the build is missing or older than the sources.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildIsFresh } from "./buildFreshness";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const mode = process.argv[2];
if (mode !== "demo" && mode !== "start" && mode !== "panel") {
  console.error("usage: node --import tsx scripts/run.ts demo|start|panel");
  process.exit(2);
}
const say = (msg: string) => console.log(`[gpudeck] ${msg}`);
// Demo mode has no login; on this host's real agent anyone could restart and kill real units.
if (mode === "start" && process.env.GPUDECK_DEMO !== undefined && process.env.GPUDECK_DEMO !== "" && process.env.GPUDECK_DEMO !== "0") {
  console.error(
    "[gpudeck] GPUDECK_DEMO is set: `npm start` runs this host's real agent, and demo mode has no login. Use `npm run demo` for the simulated hosts, or unset GPUDECK_DEMO.",
  );
  process.exit(2);
}
const children: ChildProcess[] = [];
let stopping = false;

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env, stdio: "inherit" });
    child.on("exit", (code) => resolve(code ?? 1));
  });
}

async function buildIfNeeded(): Promise<void> {
  if (buildIsFresh(root)) return;
  say("building the panel (next build)…");
  const code = await run(process.execPath, [path.join(root, "node_modules/next/dist/bin/next"), "build"], { ...process.env, NEXT_TELEMETRY_DISABLED: "1" });
  if (code !== 0) {
    console.error("[gpudeck] the build failed; see the output above.");
    process.exit(code);
  }
}

function startChild(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv, onLine?: (line: string) => void): ChildProcess {
  const child = spawn(cmd, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  const relay = (stream: NodeJS.ReadableStream, out: NodeJS.WriteStream) => {
    let buf = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      buf += chunk;
      let i: number;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        out.write(`${line}\n`);
        onLine?.(line);
      }
    });
  };
  relay(child.stdout!, process.stdout);
  relay(child.stderr!, process.stderr);
  child.on("exit", (code, signal) => {
    if (stopping) return;
    console.error(`[gpudeck] ${name} exited (${signal ?? code}); stopping.`);
    shutdown(code ?? 1);
  });
  return child;
}

function shutdown(code = 0): void {
  if (stopping) return;
  stopping = true;
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
  const force = setTimeout(() => {
    for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
    process.exit(code);
  }, 2500);
  force.unref();
  Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once("exit", r))))).then(() => process.exit(code));
}

process.once("SIGINT", () => shutdown(0));
process.once("SIGTERM", () => shutdown(0));

function startAgent(env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the agent did not start within 30 s")), 30_000);
    startChild("agent", process.execPath, ["--import", "tsx", path.join(root, "server/agent/main.ts")], env, (line) => {
      const m = /listening on (https?:\/\/\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
}

/** The demo's simulated fleet (scripts/demoAgents.ts), one process; resolves once it wrote the agents file. */
function startDemoAgents(env: NodeJS.ProcessEnv, agentsFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the demo's simulated agents did not start within 60 s")), 60_000);
    startChild("demo agents", process.execPath, ["--import", "tsx", path.join(root, "scripts/demoAgents.ts"), agentsFile], env, (line) => {
      if (/^\[demo\] \d+ agents ready/.test(line)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

function systemdReachable(): string | null {
  if (!existsSync("/run/systemd/system")) return "systemd is not running as the init system here (/run/systemd/system is missing)";
  const bus = process.env.DBUS_SYSTEM_BUS_ADDRESS;
  if (!bus && !existsSync("/run/dbus/system_bus_socket")) return "the D-Bus system bus socket /run/dbus/system_bus_socket does not exist";
  return null;
}

async function main(): Promise<void> {
  const port = process.env.PORT ?? "3000";
  const host = process.env.HOSTNAME && mode === "start" ? process.env.HOSTNAME : "127.0.0.1";
  await buildIfNeeded();
  const env: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };
  // our children's output is piped through us: tell the panel whether it ends on a terminal (the setup link)
  env.GPUDECK_INTERACTIVE = process.stdout.isTTY ? "1" : "0";

  if (mode === "demo") {
    const agentsFile = path.join(path.resolve(root, env.GPUDECK_DATA_DIR ?? ".data"), "demo-agents.json");
    await startDemoAgents(env, agentsFile);
    delete env.GPUDECK_AGENT_URL;
    delete env.GPUDECK_AGENT_TOKEN;
    env.GPUDECK_AGENTS_FILE = agentsFile;
    env.GPUDECK_DEMO = "1";
  } else if (mode === "start" && env.GPUDECK_CONFIG) {
    // the config file says where the agent listens and which agents the panel watches; each reads it
    await startAgent(env);
  } else if (mode === "start") {
    const problem = systemdReachable();
    if (problem) {
      say(`${problem}: units cannot be shown or controlled on this machine.`);
      say("GPU telemetry still works. To try gpudeck without systemd, run: npm run demo");
    }
    if (!env.GPUDECK_UNITS) say("GPUDECK_UNITS is not set: the agent will manage no units (e.g. GPUDECK_UNITS='vllm-*.service').");
    const token = env.GPUDECK_AGENT_TOKEN ?? randomBytes(32).toString("base64url");
    env.GPUDECK_AGENT_URL = await startAgent({ ...env, GPUDECK_AGENT_TOKEN: token });
    env.GPUDECK_AGENT_TOKEN = token;
  }

  // The panel's own server (Next's programmatic API on node:http): it owns the sockets, so the
  // panel knows each client's real address, and it ends live streams on SIGTERM.
  const panelEnv = env.GPUDECK_CONFIG && mode === "start" ? env : { ...env, HOSTNAME: host, PORT: port }; // else the file's panel.listen
  startChild("panel", process.execPath, ["--import", "tsx", path.join(root, "server/panel/serve.ts")], panelEnv, (line) => {
    const ready = /^\[panel\] ready on (\S+)/.exec(line);
    if (ready) say(`panel ready: ${ready[1]}/`);
  });
}

main().catch((err: Error) => {
  console.error(`[gpudeck] ${err.message}`);
  shutdown(1);
});
