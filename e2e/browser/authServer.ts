/**
 * Playwright web server for e2e/browser/auth.spec.ts: a NON-demo gpudeck (login required) on one
 * simulated host (named E2E_AUTH_HOST in the panel), with a fresh data dir seeded through the user CLI before the panel starts.
 *   admin    ada
 *   viewer   vera  (sees everything, changes nothing)
 *   operator otto  (units vllm-embed-*)
 *   operator tess  (units vllm-embed-*; account.auth.spec.ts turns on her two-factor sign-in)
 *   viewer   nell  (accessibility.auth.spec.ts turns on her two-factor sign-in)
 * The agent and the panel share the data dir: the agent writes its bearer token there and the
 * panel reads it, as on a real single host. Env: E2E_AUTH_PORT (default 3101, as in
 * playwright.config.ts), E2E_AUTH_DATA_DIR (default .data/e2e-auth-PORT).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const E2E_PASSWORD = "e2e correct horse battery";
/** The panel's name for its one host (GPUDECK_AGENT_NAME: the same on every machine). */
export const E2E_AUTH_HOST = "gpu-a";
export const E2E_USERS = [
  { name: "ada", role: "admin", units: "" },
  { name: "vera", role: "viewer", units: "" },
  { name: "otto", role: "operator", units: "vllm-embed-*" },
  // account.auth.spec.ts only (API tokens, then two-factor sign-in)
  { name: "tess", role: "operator", units: "vllm-embed-*" },
  // accessibility.auth.spec.ts only (the two-factor pages: setting it up, then the sign-in's code step)
  { name: "nell", role: "viewer", units: "" },
] as const;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
/** Port of the auth e2e panel (the Playwright config and the spec agree on it through the env). */
export const E2E_AUTH_PORT = Number(process.env.E2E_AUTH_PORT ?? 3101);
/** One data dir per port: two runs in one checkout (on different ports) must not share it. */
export const E2E_AUTH_DATA_DIR = path.resolve(root, process.env.E2E_AUTH_DATA_DIR ?? `.data/e2e-auth-${E2E_AUTH_PORT}`);

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, stdin: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: root, env, stdio: ["pipe", "inherit", "inherit"] });
    child.stdin!.end(stdin);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(" ")} exited with ${code}`))));
  });
}

const children: ChildProcess[] = [];
function start(args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", ...args], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    const timer = setTimeout(() => reject(new Error(`${args[0]} did not start`)), 200_000);
    const watch = (stream: NodeJS.ReadableStream, out: NodeJS.WriteStream) => {
      let buf = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        out.write(chunk);
        buf += chunk;
        const m = ready.exec(buf);
        if (m) {
          clearTimeout(timer);
          resolve(m[1] ?? "");
          buf = "";
        }
        if (buf.length > 100_000) buf = buf.slice(-1000);
      });
    };
    watch(child.stdout!, process.stdout);
    watch(child.stderr!, process.stderr);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${args[0]} exited (${code})`));
      stop(1);
    });
  });
}

let stopping = false;
function stop(code: number): void {
  if (stopping) return;
  stopping = true;
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
  setTimeout(() => process.exit(code), 2500).unref();
  void Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once("exit", r))))).then(() => process.exit(code));
}

async function main(): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env, GPUDECK_DATA_DIR: E2E_AUTH_DATA_DIR, NEXT_TELEMETRY_DISABLED: "1" };
  delete env.GPUDECK_DEMO;
  delete env.GPUDECK_AGENT_TOKEN;
  rmSync(E2E_AUTH_DATA_DIR, { recursive: true, force: true });
  mkdirSync(E2E_AUTH_DATA_DIR, { recursive: true, mode: 0o700 });
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  for (const u of E2E_USERS) {
    const args = ["run", "--silent", "user", "--", "add", u.name, "--role", u.role, "--password-stdin"];
    if (u.units) args.push("--units", u.units);
    await run(npm, args, env, `${E2E_PASSWORD}\n`);
  }
  const agentUrl = await start(
    ["server/agent/main.ts"],
    { ...env, GPUDECK_SIMULATE: "1", GPUDECK_UNITS: "vllm-*.service", GPUDECK_AGENT_LISTEN: "127.0.0.1:0" },
    /listening on (http:\/\/\S+)/,
  );
  await start(
    ["scripts/run.ts", "panel"],
    { ...env, GPUDECK_AGENT_URL: agentUrl, GPUDECK_AGENT_NAME: E2E_AUTH_HOST, PORT: String(E2E_AUTH_PORT) },
    /panel ready: (\S+)/,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.once("SIGTERM", () => stop(0));
  process.once("SIGINT", () => stop(0));
  main().catch((err: Error) => {
    console.error(`[e2e-auth] ${err.message}`);
    stop(1);
  });
}
