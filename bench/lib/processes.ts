/**
 * Processes the benches start: the demo (`scripts/run.ts demo`, as `npm run demo`), the demo's
 * simulated agents alone (scripts/demoAgents.ts), the per-viewer proxy baseline. Each is
 * started with its output kept (last lines shown when it fails), waited for until it prints its
 * ready line, and stopped with SIGTERM (SIGKILL after a grace period).
 */
import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cmdline, processTree } from "./proc";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

export class Proc {
  private tail: string[] = [];
  readonly exited: Promise<number | null>;
  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    this.exited = new Promise((r) => child.once("exit", (code) => r(code)));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Start `args` with node (tsx) and wait for a line matching `ready`; resolves with the match. */
  static async node(
    name: string,
    args: string[],
    env: NodeJS.ProcessEnv,
    ready: RegExp,
    timeoutMs: number,
    /** the checkout to run it in (default this one; a baseline may run another's code) */
    cwd = ROOT,
  ): Promise<{ proc: Proc; match: RegExpExecArray }> {
    const child = spawn(process.execPath, ["--import", "tsx", ...args], {
      cwd,
      env: { NEXT_TELEMETRY_DISABLED: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const proc = new Proc(name, child);
    const match = await new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name} did not get ready within ${timeoutMs / 1000} s:\n${proc.lastLines()}`)), timeoutMs);
      const onLine = (line: string) => {
        proc.tail.push(line);
        if (proc.tail.length > 40) proc.tail.shift();
        const m = ready.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve(m);
        }
      };
      for (const stream of [child.stdout!, child.stderr!]) {
        let buf = "";
        stream.setEncoding("utf8");
        stream.on("data", (chunk: string) => {
          buf += chunk;
          let i: number;
          while ((i = buf.indexOf("\n")) >= 0) {
            onLine(buf.slice(0, i));
            buf = buf.slice(i + 1);
          }
        });
      }
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`${name} exited (${code}) before it was ready:\n${proc.lastLines()}`));
      });
    });
    return { proc, match };
  }

  lastLines(): string {
    return this.tail.join("\n");
  }

  /** Processes of this one's tree whose command line matches `re` (e.g. the panel under run.ts). */
  find(re: RegExp): number[] {
    return processTree(this.pid).filter((p) => re.test(cmdline(p)));
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** The demo's environment: simulated hosts, no flaky host, a data dir of the bench's own. */
export function demoEnv(dataDir: string, hosts: number, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith("GPUDECK_") && key !== "GPUDECK_DIST_DIR") delete env[key];
  return { ...env, GPUDECK_DATA_DIR: dataDir, GPUDECK_DEMO_HOSTS: String(hosts), GPUDECK_DEMO_FLAKY_UP_S: "0", ...extra };
}

/** `npm run demo` (scripts/run.ts demo: builds the panel when needed, demo agents, the panel in demo mode). */
export async function startDemo(
  dataDir: string,
  hosts: number,
  port: number,
  extra: Record<string, string> = {},
): Promise<{ proc: Proc; url: string; agentsFile: string }> {
  const { proc, match } = await Proc.node(
    "npm run demo",
    ["scripts/run.ts", "demo"],
    { ...demoEnv(dataDir, hosts, extra), PORT: String(port) },
    /panel ready: (http:\/\/\S+?)\/?$/,
    900_000,
  );
  return { proc, url: match[1]!, agentsFile: path.join(dataDir, "demo-agents.json") };
}

/** The demo's simulated agents alone (for the baseline, which brings its own server). */
export async function startDemoAgents(dataDir: string, hosts: number, agentsFile: string): Promise<Proc> {
  const { proc } = await Proc.node("demo agents", ["scripts/demoAgents.ts", agentsFile], demoEnv(dataDir, hosts), /^\[demo\] \d+ agents ready/, 120_000);
  return proc;
}
