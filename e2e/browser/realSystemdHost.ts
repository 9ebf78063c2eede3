/**
 * A real host for the browser, as `npm start` runs one: systemd 252 (PID 1 of a throw-away
 * namespace sandbox, e2e/sandbox) with a real unit, the real agent inside it (D-Bus, journalctl,
 * the fake nvidia-smi), and the real panel on the host in NON-demo mode (login required) with
 * users seeded by the user CLI. Used by real-systemd.spec.ts (project "real-systemd").
 *
 * The panel serves the build the demo webServer made (Playwright starts every webServer before
 * any project runs). Each run gets its own ports and data dir; stop() leaves nothing behind.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { Sandbox } from "../sandbox/sandbox";
import { REPO_ROOT, RunningAgent, freePort } from "../systemd/agentHarness";

/** The real unit the browser watches; the agent's GPUDECK_UNITS is `gpudeck-e2e-*.service`. */
export const REAL_UNIT = "gpudeck-e2e-slow.service";
export const REAL_UNIT_DESCRIPTION = "gpudeck e2e: slow ExecStartPre, then a long-running service";
/** Long enough for a person (and the test) to see `activating (start-pre)`, short enough for CI. */
export const START_PRE_SECONDS = 3;
const AGENT_UNITS = "gpudeck-e2e-*.service";

const REAL_UNIT_FILE = `[Unit]
Description=${REAL_UNIT_DESCRIPTION}

[Service]
ExecStartPre=/bin/sleep ${START_PRE_SECONDS}
ExecStart=/bin/sleep infinity
`;

export const REAL_PASSWORD = "e2e real systemd horse battery";
/** The panel's name for the sandbox host (GPUDECK_AGENT_NAME; otherwise it would be this machine's name). */
export const REAL_HOST = "e2e-sandbox";
/** An operator limited to the e2e units (the one the browser signs in as), and an admin so the panel is not waiting for setup. */
export const REAL_USERS = [
  { name: "opal", role: "operator", units: "gpudeck-e2e-*" },
  { name: "ada", role: "admin", units: "" },
] as const;

export interface RealSystemdHost {
  sandbox: Sandbox;
  agent: RunningAgent;
  /** e.g. http://127.0.0.1:40123 */
  panelUrl: string;
  /** `systemctl show` of the unit inside the sandbox: what systemd itself says, to compare with the page. */
  showUnit(properties: readonly string[]): Promise<Record<string, string>>;
  /**
   * Stop the agent, run `whileDown` (nobody watches systemd meanwhile), start it again on the same
   * address and token (so the panel reconnects), as an upgrade or a crash-and-restart would.
   */
  restartAgent(whileDown: () => Promise<void>): Promise<void>;
  /** Stops the panel, the agent and the sandbox, removes the data dir; throws if anything is left. */
  stop(): Promise<void>;
}

/** Environment of the panel process: the worker's, minus anything gpudeck that could leak in (demo mode, another agent). */
function panelEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };
  for (const key of Object.keys(env)) if (key.startsWith("GPUDECK_") && key !== "GPUDECK_DIST_DIR") delete env[key];
  return { ...env, ...extra };
}

function runCli(args: string[], env: NodeJS.ProcessEnv, stdin: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/user.ts", ...args], { cwd: REPO_ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.stdin.end(stdin);
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`npm run user -- ${args.join(" ")} exited ${code}:\n${output}`))));
  });
}

interface PanelProcess {
  child: ChildProcess;
  log(): string;
  stop(): Promise<void>;
}

/** `node --import tsx server/panel/serve.ts`, as scripts/run.ts starts it; resolves once it says ready. */
async function startPanel(env: NodeJS.ProcessEnv, timeoutMs: number): Promise<PanelProcess> {
  // setpriv --pdeathsig: if the test worker dies, the panel dies with it (like the sandbox does).
  const child = spawn("/usr/bin/setpriv", ["--pdeathsig", "KILL", "--", process.execPath, "--import", "tsx", path.join(REPO_ROOT, "server/panel/serve.ts")], {
    cwd: REPO_ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const panel: PanelProcess = {
    child,
    log: () => log,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM"); // serve.ts ends its streams and exits within 2 s
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the panel did not get ready within ${timeoutMs} ms:\n${log.slice(-4000)}`)), timeoutMs);
    const onData = (d: Buffer) => {
      log = (log + d.toString()).slice(-50_000);
      if (/^\[panel\] ready on /m.test(log)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the panel exited (${signal ?? code}) before it was ready:\n${log.slice(-4000)}`));
    });
  }).catch(async (err: Error) => {
    await panel.stop();
    throw err;
  });
  return panel;
}

export async function startRealSystemdHost(): Promise<RealSystemdHost> {
  const buildId = path.join(REPO_ROOT, process.env.GPUDECK_DIST_DIR || ".next", "BUILD_ID");
  if (!existsSync(buildId)) {
    throw new Error(`no panel build at ${buildId}: run this through Playwright (its demo webServer builds the panel) or run \`npm run build\` first`);
  }

  const cleanups: Array<() => Promise<void>> = [];
  const stop = async () => {
    const problems: string[] = [];
    // panel first (it holds streams to the agent), then the agent, then systemd
    for (const cleanup of cleanups.splice(0).reverse()) {
      await cleanup().catch((e: Error) => problems.push(e.message));
    }
    if (problems.length > 0) throw new Error(`real-systemd host not cleaned up:\n${problems.join("\n")}`);
  };

  try {
    const sandbox = await Sandbox.boot({ name: "e2e-browser" });
    cleanups.push(() => sandbox.stop());
    await sandbox.writeFile(`/etc/systemd/system/${REAL_UNIT}`, REAL_UNIT_FILE);
    await sandbox.systemctl(["daemon-reload"]);

    let agent = await RunningAgent.start(sandbox, { units: AGENT_UNITS });
    cleanups.push(() => agent.stop());

    const panelPort = await freePort();
    const dataDir = path.join(REPO_ROOT, ".data", `e2e-real-systemd-${process.pid}-${panelPort}`);
    await rm(dataDir, { recursive: true, force: true });
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const env = panelEnv({
      GPUDECK_DATA_DIR: dataDir,
      GPUDECK_AGENT_URL: agent.url,
      GPUDECK_AGENT_TOKEN: agent.token,
      GPUDECK_AGENT_NAME: REAL_HOST,
      HOSTNAME: "127.0.0.1",
      PORT: String(panelPort),
    });
    for (const u of REAL_USERS) {
      const args = ["add", u.name, "--role", u.role, "--password-stdin"];
      if (u.units) args.push("--units", u.units);
      await runCli(args, env, `${REAL_PASSWORD}\n`);
    }

    const panel = await startPanel(env, 90_000);
    cleanups.push(async () => {
      await panel.stop();
      if (panel.child.exitCode === null && panel.child.signalCode === null) throw new Error(`panel (pid ${panel.child.pid}) still running`);
    });

    const host: RealSystemdHost = {
      sandbox,
      agent,
      restartAgent: async (whileDown) => {
        const { port } = new URL(agent.url);
        await agent.stop();
        await whileDown();
        agent = await RunningAgent.start(sandbox, { units: AGENT_UNITS, port: Number(port), token: agent.token });
        host.agent = agent;
      },
      panelUrl: `http://127.0.0.1:${panelPort}`,
      showUnit: async (properties) => {
        const r = await sandbox.systemctl(["show", `--property=${properties.join(",")}`, "--", REAL_UNIT]);
        return Object.fromEntries(
          r.stdout
            .split("\n")
            .filter((l) => l.includes("="))
            .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
        );
      },
      stop,
    };
    return host;
  } catch (err) {
    await stop().catch((e: Error) => console.error(`[real-systemd] cleanup after a failed start: ${e.message}`));
    throw err;
  }
}
