/**
 * A real systemd 252 as PID 1 of throw-away namespaces, for tests.
 *
 * Isolation follows ../../../shared/notes/systemd-sandbox.md (the naive version emptied the
 * host's /tmp and wrote into host cgroups): the root is an overlay (host `/` read-only lower,
 * tmpfs upper) that we pivot_root into, with fresh /run, /tmp, /dev, /proc (read-only
 * /proc/sys), a read-only /sys, cgroup2 only inside a cgroup namespace rooted at a dedicated
 * sub-cgroup, a minimal target and a reduced capability bounding set. The namespace setup
 * itself lives in boot.sh; this module runs it, waits for systemd, runs commands inside
 * and tears everything down again, checking that nothing is left.
 *
 * Every external command is spawned with an argv array; nothing is ever passed to a shell.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, promises as fs, readFileSync, readdirSync, statfsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const BOOT_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), "boot.sh");
const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const NAME_RE = /^[a-z0-9][a-z0-9-]{0,40}$/;
const CGROUP2_MAGIC = 0x63677270;
/** glibc's SIGRTMIN is 34; systemd powers off on SIGRTMIN+4. */
const SIGNAL_POWEROFF = 34 + 4;
/** Same reduction boot.sh applies to systemd, for everything we start inside. */
const BOUNDING_SET_DROP =
  "-sys_module,-sys_time,-sys_rawio,-syslog,-audit_control,-audit_read,-audit_write,-mac_admin,-mac_override,-wake_alarm,-net_admin,-block_suspend";
const INSIDE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const REQUIRED_BINARIES = ["/usr/bin/unshare", "/usr/bin/nsenter", "/usr/bin/setpriv", "/lib/systemd/systemd", "/usr/bin/dbus-daemon"];

export type SandboxSupport = { ok: true; cgroupParent: string } | { ok: false; reason: string };

/** Whether this machine can run sandboxes at all, and where their cgroups go. */
export function sandboxSupport(): SandboxSupport {
  if (process.platform !== "linux") return { ok: false, reason: "not Linux" };
  if (typeof process.getuid !== "function" || process.getuid() !== 0) {
    return { ok: false, reason: "not running as root (namespaces, pivot_root and /proc/<pid>/root need root)" };
  }
  for (const bin of REQUIRED_BINARIES) {
    if (!existsSync(bin)) return { ok: false, reason: `${bin} is missing` };
  }
  for (const mount of ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]) {
    try {
      if (statfsSync(mount).type === CGROUP2_MAGIC) return { ok: true, cgroupParent: path.join(mount, "gpudeck-sandbox") };
    } catch {
      // not mounted here; try the next place
    }
  }
  return { ok: false, reason: "no cgroup2 hierarchy at /sys/fs/cgroup/unified or /sys/fs/cgroup" };
}

/** For test files: one loud line, printed once, when the sandbox tests cannot run here. */
export function warnIfUnsupported(what: string): boolean {
  const support = sandboxSupport();
  if (support.ok) return false;
  const line = "!".repeat(100);
  console.warn(
    `\n${line}\n!!! SKIPPING ${what}: real-systemd sandbox unavailable: ${support.reason}\n!!! CI runs these as root; run them as root before trusting a change to the systemd adapter.\n${line}\n`,
  );
  return true;
}

export interface ExecResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface ExecOptions {
  input?: string | Buffer;
  env?: Record<string, string>;
  cwd?: string;
  timeoutMs?: number;
}

export interface SpawnOptions {
  env?: Record<string, string>;
  cwd?: string;
}

/** A process running inside the sandbox. `child` is the host-side `nsenter`, whose stdio it shares. */
export interface SandboxProcess {
  child: ChildProcess;
  /** Host PID of the process itself (nsenter's child), once it exists. */
  hostPid(): Promise<number>;
  /** Signal the process itself: nsenter does not forward signals. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

let sandboxCounter = 0;

export class Sandbox {
  readonly name: string;
  /** Host PID of the sandbox's systemd (PID 1 inside). */
  readonly pid: number;
  readonly cgroupDir: string;
  private readonly unshare: ChildProcess;
  private readonly unshareExit: Promise<void>;
  private readonly bootLog: string[];
  private readonly children = new Set<SandboxProcess>();
  private stopping: Promise<void> | null = null;

  private constructor(init: { name: string; pid: number; cgroupDir: string; unshare: ChildProcess; unshareExit: Promise<void>; bootLog: string[] }) {
    this.name = init.name;
    this.pid = init.pid;
    this.cgroupDir = init.cgroupDir;
    this.unshare = init.unshare;
    this.unshareExit = init.unshareExit;
    this.bootLog = init.bootLog;
  }

  /** The sandbox's system bus as seen from the host. PIDs systemd reports are the sandbox's own. */
  get busAddress(): string {
    return `unix:path=/proc/${this.pid}/root/run/dbus/system_bus_socket`;
  }

  /** For `journalctl --directory=` from the host. */
  get journalDirectory(): string {
    return `/proc/${this.pid}/root/run/log/journal`;
  }

  /** Boot systemd and wait until `is-system-running --wait` says running. */
  static async boot(opts: { name?: string; timeoutMs?: number } = {}): Promise<Sandbox> {
    const support = sandboxSupport();
    if (!support.ok) throw new Error(`sandbox unavailable: ${support.reason}`);
    const prefix = opts.name ?? "sb";
    // The owner's PID in the name lets a later run remove cgroups of a crashed run, and only those.
    const name = `${prefix}-${process.pid}-${++sandboxCounter}`;
    if (!NAME_RE.test(name)) throw new Error(`sandbox name ${JSON.stringify(name)} must match ${NAME_RE}`);
    const timeoutMs = opts.timeoutMs ?? 30_000;
    const deadline = Date.now() + timeoutMs;

    await fs.mkdir(support.cgroupParent, { recursive: true });
    await sweepStaleCgroups(support.cgroupParent);
    const cgroupDir = path.join(support.cgroupParent, name);
    // Another sandbox's stop() may rmdir the shared parent between the two steps: retry.
    for (let attempt = 0; ; attempt++) {
      try {
        await fs.mkdir(cgroupDir, { recursive: true });
        break;
      } catch (e) {
        if (attempt >= 3) throw e;
      }
    }

    const bootLog: string[] = [];
    const unshare = spawn("/usr/bin/setpriv", ["--pdeathsig", "KILL", "--", "/bin/bash", BOOT_SCRIPT, "stage1", cgroupDir, name], {
      stdio: ["ignore", "pipe", "pipe"],
      // the project itself, so boot.sh can show it inside when it lives under /tmp or /run
      env: asEnv({ PATH: INSIDE_PATH, LANG: "C.UTF-8", GPUDECK_SANDBOX_SHARE: PROJECT_ROOT }),
    });
    const collect = (chunk: Buffer) => {
      if (bootLog.join("").length < 64 * 1024) bootLog.push(chunk.toString());
    };
    unshare.stdout?.on("data", collect);
    unshare.stderr?.on("data", collect);
    let exited = false;
    const unshareExit = new Promise<void>((resolve) => {
      unshare.once("exit", (code, signal) => {
        exited = true;
        bootLog.push(`[unshare exited code=${code} signal=${signal}]\n`);
        resolve();
      });
    });

    const fail = async (why: string): Promise<never> => {
      await killAndCleanup(unshare, unshareExit, cgroupDir);
      throw new Error(`sandbox ${name}: ${why}\n--- boot output ---\n${bootLog.join("")}`);
    };

    // PID 1 of the new PID namespace: in our cgroup subtree, NSpid ending in 1, exec'd into systemd.
    let pid = 0;
    while (!pid) {
      if (exited) return fail("boot script exited before systemd started");
      if (Date.now() > deadline) return fail("systemd did not start in time");
      pid = (await findNamespaceInit(cgroupDir, "systemd")) ?? 0;
      if (!pid) await sleep(10);
    }

    const sb = new Sandbox({ name, pid, cgroupDir, unshare, unshareExit, bootLog });
    // Very early, systemctl says "offline" (no /run/systemd/system yet) or fails with "Failed to
    // connect to bus" (no private socket yet): ask again until systemd is far enough to wait.
    let wait: ExecResult;
    for (;;) {
      wait = await sb
        .exec(["systemctl", "is-system-running", "--wait"], { timeoutMs: Math.max(1000, deadline - Date.now()) })
        .catch((e: unknown) => ({ code: null, signal: null, stdout: "", stderr: String(e) }) satisfies ExecResult);
      const early = wait.stdout.trim() === "" || wait.stdout.trim() === "offline";
      if (!early || exited || Date.now() > deadline) break;
      await sleep(20);
    }
    const state = wait.stdout.trim();
    if (state !== "running") {
      const failed = await sb.exec(["systemctl", "--failed", "--no-pager", "--plain"], { timeoutMs: 5000 }).catch(() => null);
      await sb.stop().catch(() => undefined);
      throw new Error(
        `sandbox ${name}: system state is ${JSON.stringify(state)} (code ${wait.code}), not running\n${wait.stderr}\n${failed?.stdout ?? ""}\n--- boot output ---\n${bootLog.join("")}`,
      );
    }
    return sb;
  }

  private nsenterArgv(argv: readonly string[], cwd: string | undefined): string[] {
    if (argv.length === 0) throw new Error("empty argv");
    if (this.stopping) throw new Error(`sandbox ${this.name} is stopping`);
    return [
      "--pdeathsig",
      "KILL",
      "--",
      "/usr/bin/nsenter",
      `--target=${this.pid}`,
      "--mount",
      "--pid",
      "--uts",
      "--ipc",
      "--cgroup",
      `--wdns=${cwd ?? "/"}`,
      "--",
      "/usr/bin/setpriv",
      "--pdeathsig",
      "KILL",
      `--bounding-set=${BOUNDING_SET_DROP}`,
      "--",
      ...argv,
    ];
  }

  private insideEnv(env: Record<string, string> | undefined): Record<string, string> {
    // A clean environment, as a service would get: the host's (DBUS_*, vitest's ...) must not leak in.
    return { PATH: INSIDE_PATH, HOME: "/root", LANG: "C.UTF-8", ...env };
  }

  /** Run a process inside the sandbox (all its namespaces), e.g. the agent. */
  spawn(argv: readonly string[], opts: SpawnOptions = {}): SandboxProcess {
    const child = spawn("/usr/bin/setpriv", this.nsenterArgv(argv, opts.cwd), {
      stdio: ["pipe", "pipe", "pipe"],
      env: asEnv(this.insideEnv(opts.env)),
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once("exit", (code, signal) => resolve({ code, signal }));
    });
    let hostPidCache = 0;
    const hostPid = async (): Promise<number> => {
      if (hostPidCache) return hostPidCache;
      const until = Date.now() + 10_000;
      while (Date.now() < until) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error("process already exited");
        const kids = child.pid ? childrenOf(child.pid) : [];
        if (kids.length > 0) return (hostPidCache = kids[0]!);
        await sleep(5);
      }
      throw new Error("could not find the process nsenter started");
    };
    const handle: SandboxProcess = {
      child,
      hostPid,
      exited,
      kill: async (signal: NodeJS.Signals = "SIGTERM") => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const pid = await hostPid().catch(() => 0);
        if (pid) {
          try {
            process.kill(pid, signal);
          } catch {
            // already gone
          }
        }
      },
    };
    this.children.add(handle);
    void exited.then(() => this.children.delete(handle));
    return handle;
  }

  /** Run to completion inside; never throws for a non-zero exit (see `code`). */
  async exec(argv: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
    const p = this.spawn(argv, { env: opts.env, cwd: opts.cwd });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    p.child.stdout?.on("data", (c: Buffer) => out.push(c));
    p.child.stderr?.on("data", (c: Buffer) => err.push(c));
    p.child.stdin?.on("error", () => undefined); // EPIPE when the command ignores stdin
    p.child.stdin?.end(opts.input ?? "");
    const timeoutMs = opts.timeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    const r = await Promise.race([p.exited, timedOut]);
    clearTimeout(timer);
    if (r === "timeout") {
      await p.kill("SIGKILL");
      p.child.kill("SIGKILL");
      await p.exited;
      throw new Error(`timed out after ${timeoutMs} ms: ${argv.join(" ")}\n${Buffer.concat(err).toString()}`);
    }
    // 'exit' may come before the pipes are drained
    await Promise.all([streamEnd(p.child.stdout), streamEnd(p.child.stderr)]);
    return { code: r.code, signal: r.signal, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
  }

  /** `systemctl ARGS` inside; throws on a non-zero exit unless `check: false`. */
  async systemctl(args: readonly string[], opts: { check?: boolean; timeoutMs?: number } = {}): Promise<ExecResult> {
    const r = await this.exec(["systemctl", "--no-pager", ...args], { timeoutMs: opts.timeoutMs });
    if ((opts.check ?? true) && r.code !== 0) {
      throw new Error(`systemctl ${args.join(" ")} exited ${r.code}: ${r.stderr.trim()}`);
    }
    return r;
  }

  /**
   * Write a file inside the sandbox (into the overlay's tmpfs upper layer; the host never sees it).
   * Written by a process inside rather than through /proc/<pid>/root: there, an absolute symlink
   * in the path (e.g. /var/run -> /run) would resolve against the HOST's root.
   */
  async writeFile(filePath: string, content: string | Buffer, mode = "0644"): Promise<void> {
    checkInsidePath(filePath);
    if (!/^[0-7]{3,4}$/.test(mode)) throw new Error(`bad mode ${mode}`);
    // Our stdin is a socket, which /dev/stdin cannot reopen: create the file (and its directories)
    // with its mode first, then let dd write fd 0 into it.
    const steps: Array<[string[], string | Buffer | undefined]> = [
      [["install", "-D", "-m", mode, "--", "/dev/null", filePath], undefined],
      [["dd", `of=${filePath}`, "status=none"], content],
    ];
    for (const [argv, input] of steps) {
      const r = await this.exec(argv, { input });
      if (r.code !== 0) throw new Error(`writing ${filePath} in sandbox ${this.name} failed: ${r.stderr.trim()}`);
    }
  }

  async readFile(filePath: string): Promise<string> {
    checkInsidePath(filePath);
    const r = await this.exec(["cat", "--", filePath]);
    if (r.code !== 0) throw new Error(`reading ${filePath} in sandbox ${this.name} failed: ${r.stderr.trim()}`);
    return r.stdout;
  }

  async removeFile(filePath: string): Promise<void> {
    checkInsidePath(filePath);
    const r = await this.exec(["rm", "-f", "--", filePath]);
    if (r.code !== 0) throw new Error(`removing ${filePath} in sandbox ${this.name} failed: ${r.stderr.trim()}`);
  }

  /** Host PID for a PID as the sandbox sees it (what systemd reports), or null. */
  hostPidOf(sandboxPid: number): number | null {
    for (const pid of cgroupPidsRecursive(this.cgroupDir)) {
      const ns = nsPids(pid);
      if (ns && ns.length > 1 && ns[ns.length - 1] === sandboxPid) return pid;
    }
    return null;
  }

  /**
   * Power off (SIGRTMIN+4 to systemd), wait, make sure the PID namespace is gone, remove the
   * sub-cgroup and verify nothing is left. Safe to call more than once.
   */
  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    // Let processes we started end gracefully first (an agent closes its server).
    const children = [...this.children];
    await Promise.all(children.map((c) => c.kill("SIGTERM")));
    await withTimeout(Promise.all(children.map((c) => c.exited)), 2000);

    try {
      process.kill(this.pid, SIGNAL_POWEROFF);
    } catch {
      // already gone: the teardown below still runs
    }
    const clean =
      (await withTimeout(
        this.unshareExit.then(() => true),
        10_000,
      )) === true;
    await killAndCleanup(this.unshare, this.unshareExit, this.cgroupDir);
    await withTimeout(Promise.all(children.map((c) => c.exited)), 5000);

    const left: string[] = [];
    if (pidAlive(this.pid, "systemd")) left.push(`systemd (host pid ${this.pid}) still running`);
    if (existsSync(this.cgroupDir)) left.push(`cgroup ${this.cgroupDir} still exists`);
    for (const c of children) {
      if (c.child.exitCode === null && c.child.signalCode === null) left.push(`nsenter ${c.child.pid} still running`);
    }
    if (left.length > 0) throw new Error(`sandbox ${this.name} not cleaned up: ${left.join("; ")}`);
    if (!clean) throw new Error(`sandbox ${this.name}: systemd did not power off within 10 s (killed instead)\n${this.bootLog.join("")}`);
  }
}

// ---------------------------------------------------------------------------------------

/** Next's types make NODE_ENV mandatory in ProcessEnv; these environments are deliberately minimal. */
function asEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return env as NodeJS.ProcessEnv;
}

function checkInsidePath(p: string): void {
  if (!p.startsWith("/") || p.includes("\0") || p.split("/").includes("..")) {
    throw new Error(`sandbox paths must be absolute without '..': ${JSON.stringify(p)}`);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Resolves with the promise's value, or undefined after `ms` (the timer never outlives it). */
async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function streamEnd(s: NodeJS.ReadableStream | null | undefined): Promise<void> {
  if (!s || (s as unknown as { readableEnded?: boolean }).readableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    s.once("end", resolve);
    s.once("close", resolve);
  });
}

function readCgroupProcs(dir: string): number[] {
  try {
    return readFileSync(path.join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function cgroupSubdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => path.join(dir, d.name));
  } catch {
    return [];
  }
}

function cgroupPidsRecursive(dir: string): number[] {
  return [...readCgroupProcs(dir), ...cgroupSubdirs(dir).flatMap(cgroupPidsRecursive)];
}

function nsPids(pid: number): number[] | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const line = status.split("\n").find((l) => l.startsWith("NSpid:"));
    return line ? line.slice(6).trim().split(/\s+/).map(Number) : null;
  } catch {
    return null;
  }
}

function comm(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return null;
  }
}

function pidAlive(pid: number, expectedComm: string): boolean {
  const c = comm(pid);
  if (c === null) return false;
  try {
    // a zombie is not "left behind": its parent will reap it
    const state = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "")[0];
    if (state === "Z" || state === "X") return false;
  } catch {
    return false;
  }
  return c === expectedComm;
}

async function findNamespaceInit(cgroupDir: string, expectedComm: string): Promise<number | null> {
  for (const pid of cgroupPidsRecursive(cgroupDir)) {
    const ns = nsPids(pid);
    if (ns && ns.length > 1 && ns[ns.length - 1] === 1 && comm(pid) === expectedComm) return pid;
  }
  return null;
}

/** Host PIDs whose parent is `ppid` (this kernel has no /proc/<pid>/task/<tid>/children). */
function childrenOf(ppid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === ppid) out.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return out;
}

function cgroupPopulated(dir: string): boolean {
  try {
    return /^populated 1$/m.test(readFileSync(path.join(dir, "cgroup.events"), "utf8"));
  } catch {
    return false;
  }
}

/** rmdir a cgroup tree bottom-up (cgroup directories are removed with rmdir, never rm -r). */
async function removeCgroupTree(dir: string): Promise<void> {
  for (const sub of cgroupSubdirs(dir)) await removeCgroupTree(sub);
  await fs.rmdir(dir).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== "ENOENT") throw e;
  });
}

async function killAndCleanup(unshare: ChildProcess, unshareExit: Promise<void>, cgroupDir: string): Promise<void> {
  if (unshare.exitCode === null && unshare.signalCode === null) {
    // --kill-child: the whole PID namespace goes with it
    unshare.kill("SIGKILL");
    await unshareExit;
  }
  const until = Date.now() + 5000;
  while (cgroupPopulated(cgroupDir) && Date.now() < until) {
    // only our own subtree: every process in it belongs to this sandbox
    await fs.writeFile(path.join(cgroupDir, "cgroup.kill"), "1").catch(() => undefined);
    await sleep(20);
  }
  await removeCgroupTree(cgroupDir);
  // The shared parent goes when the last sandbox is gone; another one may still use it.
  await fs.rmdir(path.dirname(cgroupDir)).catch(() => undefined);
}

/** Remove sub-cgroups left by crashed runs: owner PID dead and nothing in them. */
async function sweepStaleCgroups(parent: string): Promise<void> {
  for (const dir of cgroupSubdirs(parent)) {
    const m = /-(\d+)-\d+$/.exec(path.basename(dir));
    if (!m) continue;
    const owner = Number(m[1]);
    if (owner === process.pid || existsSync(`/proc/${owner}`)) continue;
    if (cgroupPopulated(dir)) continue;
    await removeCgroupTree(dir).catch(() => undefined);
  }
}
