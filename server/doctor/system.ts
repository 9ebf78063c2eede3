/**
 * The doctor's real ports: programs run with execFile-style argv (never a shell), systemd over the
 * system bus with the agent's own D-Bus wrapper, files, and HTTP GET with a timeout.
 */
import { execFileSync, spawn } from "node:child_process";
import { constants, promises as fs, readFileSync } from "node:fs";
import os from "node:os";
import { BusConnection, SYSTEM_BUS_DEFAULT } from "../agent/systemd/bus";
import { agentFetch } from "../panel/agentTls";
import type { AgentTls } from "../panel/tlsPin";
import type { FilesPort, HttpGet, Identity, Runner, SystemdProbe, WithProcessOf } from "./types";

const MAX_OUTPUT = 1024 * 1024;

export const systemRunner: Runner = {
  run(file, args, opts = {}) {
    const started = performance.now();
    return new Promise((resolve) => {
      const child = spawn(file, [...args], { stdio: ["ignore", "pipe", "pipe"], env: (opts.env ?? process.env) as NodeJS.ProcessEnv });
      let stdout = "";
      let stderr = "";
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill("SIGKILL"); // a hung nvidia-smi ignores SIGTERM
      }, opts.timeoutMs ?? 10_000);
      child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout = (stdout + d).slice(0, MAX_OUTPUT)));
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr = (stderr + d).slice(0, MAX_OUTPUT)));
      child.once("error", (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        resolve({ code: null, stdout, stderr, timedOut: false, spawnError: `${err.code ?? "error"} (${err.message})`, ms: performance.now() - started });
      });
      child.once("close", (code) => {
        clearTimeout(timer);
        resolve({ code: timedOut ? null : code, stdout, stderr, timedOut, ms: performance.now() - started });
      });
    });
  },
};

const SD = "org.freedesktop.systemd1";
const SD_PATH = "/org/freedesktop/systemd1";
const MANAGER = "org.freedesktop.systemd1.Manager";

/** Connects on first use. */
export function busSystemdProbe(address = process.env.DBUS_SYSTEM_BUS_ADDRESS || SYSTEM_BUS_DEFAULT): SystemdProbe {
  let conn: Promise<BusConnection> | null = null;
  const open = () => (conn ??= BusConnection.open(address, 5000));
  const unwrap = (v: unknown): unknown => (v && typeof v === "object" && "value" in v ? (v as { value: unknown }).value : v);
  return {
    address,
    async version() {
      const c = await open();
      const [v] = await c.call(
        { destination: SD, path: SD_PATH, interface: "org.freedesktop.DBus.Properties", member: "Get", signature: "ss", body: [MANAGER, "Version"] },
        5000,
      );
      return String(unwrap(v));
    },
    async unitsMatching(globs) {
      const c = await open();
      const [loaded] = await c.call(
        { destination: SD, path: SD_PATH, interface: MANAGER, member: "ListUnitsByPatterns", signature: "asas", body: [[], globs] },
        10_000,
      );
      const [files] = await c.call(
        { destination: SD, path: SD_PATH, interface: MANAGER, member: "ListUnitFilesByPatterns", signature: "asas", body: [[], globs] },
        10_000,
      );
      const names = new Set<string>();
      for (const row of loaded as unknown[][]) names.add(String(row[0]));
      for (const row of files as unknown[][]) names.add(String(row[0]).split("/").pop()!);
      return [...names].sort();
    },
    async serviceUser(unit) {
      const c = await open();
      const get = async (path: string, iface: string, prop: string) =>
        unwrap(
          (await c.call({ destination: SD, path, interface: "org.freedesktop.DBus.Properties", member: "Get", signature: "ss", body: [iface, prop] }, 5000))[0],
        );
      const [path] = await c.call({ destination: SD, path: SD_PATH, interface: MANAGER, member: "LoadUnit", signature: "s", body: [unit] }, 5000);
      if ((await get(String(path), "org.freedesktop.systemd1.Unit", "LoadState")) !== "loaded") return null;
      return String(await get(String(path), "org.freedesktop.systemd1.Service", "User"));
    },
    async close() {
      if (conn) (await conn.catch(() => null))?.close();
    },
  };
}

export const systemFiles: FilesPort = {
  async stat(p) {
    try {
      const s = await fs.stat(p);
      return { isDirectory: s.isDirectory(), mode: s.mode & 0o7777, uid: s.uid };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  },
  async writable(p) {
    return fs.access(p, constants.W_OK).then(
      () => true,
      () => false,
    );
  },
  readText: (p) => fs.readFile(p, "utf8"),
};

/** GET through `fetchImpl`: the global fetch, or one that verifies an agent's certificate as the panel does. */
export function httpGetWith(fetchImpl: typeof fetch): HttpGet {
  return async (url, headers, timeoutMs) => {
    const res = await fetchImpl(url, { headers, signal: AbortSignal.timeout(timeoutMs), redirect: "manual" });
    return { status: res.status, text: (await res.text()).slice(0, 64 * 1024) };
  };
}

export const httpGet: HttpGet = httpGetWith(fetch);

/** For an https agent with a CA file or a pinned certificate: the panel's own verifying fetch. */
export const httpGetForAgentTls = (tls: AgentTls): HttpGet => httpGetWith(agentFetch(tls));

/** A `sleep` of `user` (setpriv: uid, primary group and its groups) for as long as `fn` runs. */
export const withProcessOf: WithProcessOf = async (user, fn) => {
  const gid = execFileSync("id", ["-g", "--", user], { encoding: "utf8", timeout: 5000 }).trim();
  const child = spawn("setpriv", [`--reuid=${user}`, `--regid=${gid}`, "--init-groups", "--", "sleep", "60"], { stdio: "ignore" });
  try {
    const pid = child.pid;
    if (!pid) throw new Error("setpriv did not start");
    // once it has exec'd into sleep, the process is the user's
    const deadline = Date.now() + 3000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`setpriv exited ${child.exitCode}`);
      let comm = "";
      try {
        comm = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
      } catch {
        comm = "";
      }
      if (comm === "sleep") break;
      if (Date.now() > deadline) throw new Error("setpriv did not become sleep within 3 s");
      await new Promise((r) => setTimeout(r, 10));
    }
    return await fn(pid);
  } finally {
    child.kill("SIGKILL");
  }
};

/** This process's uid and group names (`id -Gn`; Node has the ids only). */
export function currentIdentity(): Identity {
  let groups: string[] = [];
  try {
    groups = execFileSync("id", ["-Gn"], { encoding: "utf8", timeout: 5000 }).trim().split(/\s+/);
  } catch {
    groups = [];
  }
  return { uid: process.getuid?.() ?? os.userInfo().uid, groups, pid: process.pid };
}
