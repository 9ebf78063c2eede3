/**
 * Test-only: the README's nginx and HAProxy blocks (between `<!-- e2e/proxies: nginx -->` and
 * `<!-- /e2e/proxies: nginx -->`, and the same for haproxy), made runnable here: only what a
 * reader would change for their machine is rewritten (the listen address, certificate paths,
 * the panel's address), each rewrite must find its line, and the rest is used as written, so
 * the docs cannot drift from what is tested. Then Debian's nginx and haproxy run them as the
 * current user, with their own config, pid, log and temp files in a temp dir.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";

export const PUBLIC_NAME = "gpudeck.example.com";

/** The fenced code block between the README's markers for `name`. */
export function readmeBlock(readme: string, name: "nginx" | "haproxy"): string {
  const start = readme.indexOf(`<!-- e2e/proxies: ${name} -->`);
  const end = readme.indexOf(`<!-- /e2e/proxies: ${name} -->`);
  if (start < 0 || end < start) throw new Error(`README.md has no block marked <!-- e2e/proxies: ${name} --> … <!-- /e2e/proxies: ${name} -->`);
  const fenced = /```[a-z]*\n([\s\S]*?)\n```/.exec(readme.slice(start, end));
  if (!fenced) throw new Error(`README.md's e2e/proxies: ${name} markers hold no fenced code block`);
  return fenced[1]!;
}

/** Replace what `pattern` matches, failing when the README no longer has it. */
function rewrite(text: string, pattern: RegExp, replacement: string, what: string): string {
  if (!pattern.test(text)) throw new Error(`the README's proxy block no longer has ${what} (${pattern}): update e2e/proxies/readmeProxies.ts with it`);
  return text.replace(new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`), replacement);
}

export interface NginxPlan {
  dir: string;
  port: number;
  panelPort: number;
  cert: string;
  key: string;
  /** the Host header to pass instead of the README's `$http_host` (`$host`: what the README warns against) */
  hostHeader?: string;
}

/** nginx.conf around the README's `server { … }`: its own pid, logs and temp paths under `dir`. */
export function nginxConfig(block: string, p: NginxPlan): string {
  let server = rewrite(block, /listen 443 ssl;/, `listen 127.0.0.1:${p.port} ssl;`, "`listen 443 ssl;`");
  server = rewrite(server, /ssl_certificate\s+\S+;/, `ssl_certificate ${p.cert};`, "ssl_certificate");
  server = rewrite(server, /ssl_certificate_key\s+\S+;/, `ssl_certificate_key ${p.key};`, "ssl_certificate_key");
  server = rewrite(server, /proxy_pass http:\/\/127\.0\.0\.1:3000;/, `proxy_pass http://127.0.0.1:${p.panelPort};`, "proxy_pass http://127.0.0.1:3000");
  if (p.hostHeader)
    server = rewrite(server, /proxy_set_header Host \$http_host;/, `proxy_set_header Host ${p.hostHeader};`, "`proxy_set_header Host $http_host;`");
  const temp = (name: string) => path.join(p.dir, name);
  return [
    "daemon off;",
    "worker_processes 1;",
    // as root, workers would run as nobody and could not read the temp dir's files
    ...(process.getuid?.() === 0 ? ["user root root;"] : []),
    `pid ${temp("nginx.pid")};`,
    `error_log ${temp("error.log")} warn;`,
    "events { worker_connections 512; }",
    "http {",
    `    access_log ${temp("access.log")};`,
    `    client_body_temp_path ${temp("body")};`,
    `    proxy_temp_path ${temp("proxy")};`,
    `    fastcgi_temp_path ${temp("fastcgi")};`,
    `    uwsgi_temp_path ${temp("uwsgi")};`,
    `    scgi_temp_path ${temp("scgi")};`,
    server,
    "}",
    "",
  ].join("\n");
}

export interface HaproxyPlan {
  dir: string;
  port: number;
  panelPort: number;
}

/**
 * The README's backend as `backend gpudeck_plain` with the plainest check instead of its own:
 * `option httpchk GET /healthz` (HTTP/1.0, no Host header), which the panel must answer too.
 */
function plainCheckBackend(backend: string): string {
  let plain = rewrite(backend, /^backend gpudeck$/m, "backend gpudeck_plain", "`backend gpudeck`");
  plain = rewrite(plain, /^(\s*)option httpchk.*$/m, "$1option httpchk GET /healthz", "`option httpchk`");
  return rewrite(plain, /^\s*http-check send .*\n/m, "", "`http-check send …`");
}

/**
 * haproxy.cfg around the README's `backend gpudeck`: a frontend on `port`, a stats socket under
 * `dir`, and the same backend with a plain check (`gpudeck_plain`, health-checked only).
 */
export function haproxyConfig(block: string, p: HaproxyPlan): string {
  const backend = rewrite(block, /server (\w+) 10\.0\.0\.\d+:3000/, `server $1 127.0.0.1:${p.panelPort}`, "`server a 10.0.0.11:3000`");
  return [
    "global",
    `    stats socket ${path.join(p.dir, "admin.sock")} mode 600 level admin`,
    "defaults",
    "    mode http",
    "    timeout connect 5s",
    "    timeout client 1h",
    "frontend www",
    `    bind 127.0.0.1:${p.port}`,
    "    default_backend gpudeck",
    backend,
    plainCheckBackend(backend),
    "",
  ].join("\n");
}

/** What HAProxy's stats socket says about each server of a backend: status (UP/DOWN) and last check (L7OK, L7STS …). */
export async function haproxyServers(socketPath: string, backend = "gpudeck"): Promise<{ name: string; status: string; check: string }[]> {
  const text = await new Promise<string>((resolve, reject) => {
    let out = "";
    const s = net.connect(socketPath, () => s.end("show stat\n"));
    s.setEncoding("utf8");
    s.on("data", (c: string) => (out += c));
    s.on("end", () => resolve(out));
    s.on("error", reject);
  });
  const [header, ...rows] = text.trim().split("\n");
  const cols = header!.replace(/^# /, "").split(",");
  const at = (row: string[], name: string) => row[cols.indexOf(name)] ?? "";
  return rows
    .map((r) => r.split(","))
    .filter((r) => at(r, "pxname") === backend && !["FRONTEND", "BACKEND"].includes(at(r, "svname")))
    .map((r) => ({ name: at(r, "svname"), status: at(r, "status"), check: at(r, "check_status") }));
}

export interface Proxy {
  name: string;
  port: number;
  output(): string;
  stop(): Promise<void>;
}

/** Run `program args` in the foreground until stop(); fail when it exits before `ready` is true. */
export async function startProxy(name: string, program: string, args: string[], ready: () => Promise<boolean>, port: number): Promise<Proxy> {
  let out = "";
  const child: ChildProcess = spawn(program, args, { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}) before it was ready:\n${out.slice(-3000)}`);
    if (await ready().catch(() => false)) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${name} was not ready within 15 s:\n${out.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    name,
    port,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** True once something accepts connections on 127.0.0.1:port. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1", () => {
      s.destroy();
      resolve(true);
    });
    s.on("error", () => resolve(false));
  });
}

/** Write nginx's config (and the dirs it names) under `dir`; returns the config's path. */
export function writeNginx(readme: string, plan: NginxPlan): string {
  for (const d of ["body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(path.join(plan.dir, d), { recursive: true });
  const file = path.join(plan.dir, "nginx.conf");
  writeFileSync(file, nginxConfig(readmeBlock(readme, "nginx"), plan));
  return file;
}

export function writeHaproxy(readme: string, plan: HaproxyPlan): string {
  const file = path.join(plan.dir, "haproxy.cfg");
  writeFileSync(file, haproxyConfig(readmeBlock(readme, "haproxy"), plan));
  return file;
}

export const readReadme = (root: string) => readFileSync(path.join(root, "README.md"), "utf8");
