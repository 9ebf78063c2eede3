/**
 * The real ProcAdapter: a PID's state, command line, start time and systemd unit, read from
 * /proc. The parsing is pure and exported for tests; only `createProcAdapter` touches files.
 */
import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { ProcAdapter } from "../adapter";
import type { ProcState, ProcessInfo } from "../../contract/types";

/** Linux exposes times in /proc in USER_HZ, which is 100 on every mainstream architecture. */
const USER_HZ = 100;

export interface ParsedStat {
  pid: number;
  comm: string;
  state: ProcState;
  /** the raw state letter (R, S, D, Z, T, t, X, I …) */
  stateLetter: string;
  ppid: number;
  /** clock ticks since boot (field 22) */
  startTimeTicks: number;
}

export function procStateFromLetter(letter: string): ProcState {
  switch (letter) {
    case "R":
      return "running";
    case "S":
    case "I": // idle kernel thread
    case "W": // paging (old kernels) / waking
    case "P": // parked
      return "sleeping";
    case "D":
      return "uninterruptible";
    case "Z":
      return "zombie";
    case "T":
    case "t":
      return "stopped";
    case "X":
    case "x":
      return "gone";
    default:
      return "sleeping";
  }
}

/**
 * /proc/<pid>/stat. `comm` sits in parentheses and may itself contain spaces and `)`, so the
 * fields are read after the LAST `)`.
 */
export function parseProcStat(text: string): ParsedStat | null {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  const rest = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  // rest[0] is field 3 (state); field N is rest[N - 3].
  if (!Number.isInteger(pid) || rest.length < 20) return null;
  const stateLetter = rest[0];
  return {
    pid,
    comm: text.slice(open + 1, close),
    state: procStateFromLetter(stateLetter),
    stateLetter,
    ppid: Number(rest[1]),
    startTimeTicks: Number(rest[19]),
  };
}

/** /proc/<pid>/cmdline: NUL-separated arguments (empty for zombies and kernel threads). */
export function parseCmdline(buf: Buffer | string): string[] {
  const text = typeof buf === "string" ? buf : buf.toString("utf8");
  if (text === "") return [];
  const parts = text.split("\0");
  if (parts[parts.length - 1] === "") parts.pop();
  return parts;
}

/** `btime` from /proc/stat: boot time in seconds since the epoch. */
export function parseBootTimeSec(procStat: string): number | null {
  const m = /^btime\s+(\d+)$/m.exec(procStat);
  return m ? Number(m[1]) : null;
}

const UNIT_SUFFIX_RE = /\.(service|scope)$/;

/**
 * The innermost systemd unit (.service or .scope) in a cgroup path, or null.
 * - `/system.slice/vllm.service` → vllm.service
 * - `/system.slice/vllm.service/worker` (delegated sub-cgroup) → vllm.service
 * - `/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service` → foo.service
 * - `/user.slice/user-1000.slice/session-3.scope` → session-3.scope
 * - `/user.slice/user-1000.slice/user@1000.service/init.scope` → user@1000.service (the
 *   user manager itself lives in its service's init.scope)
 * - `/init.scope` → init.scope (PID 1)
 */
export function unitFromCgroupPath(cgroupPath: string): string | null {
  const segments = cgroupPath.split("/").filter((s) => s !== "");
  for (let i = segments.length - 1; i >= 0; i--) {
    const seg = segments[i];
    if (!UNIT_SUFFIX_RE.test(seg)) continue;
    if (seg === "init.scope" && i > 0 && UNIT_SUFFIX_RE.test(segments[i - 1])) return segments[i - 1];
    return seg;
  }
  return null;
}

/**
 * /proc/<pid>/cgroup → systemd unit. cgroup v2 (`0::/path`) is preferred, then v1's
 * `name=systemd` hierarchy, then any other hierarchy that names a unit (hybrid and odd setups).
 */
export function unitFromCgroupFile(text: string): string | null {
  const entries = text
    .split(/\r?\n/)
    .filter((l) => l.trim() !== "")
    .map((line) => {
      const first = line.indexOf(":");
      const second = line.indexOf(":", first + 1);
      if (first < 0 || second < 0) return null;
      return { id: line.slice(0, first), controllers: line.slice(first + 1, second), path: line.slice(second + 1) };
    })
    .filter((e): e is { id: string; controllers: string; path: string } => e !== null);
  const v2 = entries.find((e) => e.id === "0" && e.controllers === "");
  const v1systemd = entries.find((e) => e.controllers.split(",").includes("name=systemd"));
  for (const e of [v2, v1systemd]) {
    const unit = e ? unitFromCgroupPath(e.path) : null;
    if (unit) return unit;
  }
  for (const e of entries) {
    const unit = unitFromCgroupPath(e.path);
    if (unit) return unit;
  }
  return null;
}

async function readText(file: string): Promise<string | null> {
  try {
    return await readFile(file, "utf8");
  } catch {
    return null;
  }
}

/** /proc/<pid>/stat is ~300 bytes; one buffer serves every read (they are synchronous). */
const STAT_BUFFER = Buffer.allocUnsafe(4096);

/**
 * A PID's stat file, or null when it is gone. Read synchronously into a reused buffer: the
 * sampler reads every holder's stat each second, and `fs/promises` readFile (open, fstat, read,
 * read, close, each a trip through the thread pool, plus a FileHandle) was most of the agent's
 * own CPU. The kernel answers stat without the process's memory lock (unlike cmdline, which
 * stays asynchronous), so a process stuck in the driver cannot stall the agent here.
 */
export function readStatFile(file: string): string | null {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return null;
  }
  try {
    const n = readSync(fd, STAT_BUFFER, 0, STAT_BUFFER.length, 0);
    // a longer file (not a real stat: a test tree, a future kernel): read it whole
    return n < STAT_BUFFER.length ? STAT_BUFFER.toString("utf8", 0, n) : readFileSync(file, "utf8");
  } catch {
    return null; // ESRCH: it exited between open and read
  } finally {
    closeSync(fd);
  }
}

/** How long a living process's command line and unit are reused (same PID, same start time). */
const DETAIL_TTL_MS = 10_000;
const DETAIL_CACHE_MAX = 4096;

/**
 * Reads /proc (or a directory laid out like it, for tests). Every call reads the PID's stat
 * (its state: the exited-holder check needs it fresh); its cmdline and cgroup are read again
 * only when the process is new (another start time) or `detailTtlMs` passed — the sampler asks
 * about every holder every second, and three async reads per holder were most of the agent's CPU.
 */
export function createProcAdapter(procRoot = "/proc", opts: { detailTtlMs?: number } = {}): ProcAdapter & { bootTimeMs(): Promise<number | null> } {
  const ttlMs = opts.detailTtlMs ?? DETAIL_TTL_MS;
  let bootTimeMsCache: number | null | undefined;
  async function bootTimeMs(): Promise<number | null> {
    if (bootTimeMsCache !== undefined) return bootTimeMsCache;
    const stat = await readText(path.join(procRoot, "stat"));
    const sec = stat === null ? null : parseBootTimeSec(stat);
    bootTimeMsCache = sec === null ? null : sec * 1000;
    return bootTimeMsCache;
  }
  const details = new Map<number, { startTimeTicks: number; readAtMs: number; cmdline: string[]; unit: string | null }>();

  return {
    bootTimeMs,
    async inspect(pid: number) {
      const gone = { info: { pid, state: "gone" as const, cmdline: [] }, unit: null };
      if (!Number.isInteger(pid) || pid <= 0) return gone;
      const dir = path.join(procRoot, String(pid));
      const boot = bootTimeMsCache !== undefined ? bootTimeMsCache : await bootTimeMs();
      const statText = readStatFile(path.join(dir, "stat"));
      const stat = statText === null ? null : parseProcStat(statText);
      if (!stat) {
        details.delete(pid);
        return gone;
      }
      const now = Date.now();
      let d = details.get(pid);
      if (!d || d.startTimeTicks !== stat.startTimeTicks || now - d.readAtMs >= ttlMs) {
        const [cmdlineBuf, cgroupText] = await Promise.all([readFile(path.join(dir, "cmdline")).catch(() => null), readText(path.join(dir, "cgroup"))]);
        d = {
          startTimeTicks: stat.startTimeTicks,
          readAtMs: now,
          cmdline: cmdlineBuf === null ? [] : parseCmdline(cmdlineBuf),
          unit: cgroupText === null ? null : unitFromCgroupFile(cgroupText),
        };
        // a zombie's cmdline is empty: keep nothing that would outlive the process's own answer
        if (stat.state !== "zombie") {
          if (details.size >= DETAIL_CACHE_MAX) details.delete(details.keys().next().value!);
          details.set(pid, d);
        }
      }
      const info: ProcessInfo = { pid, state: stat.state, cmdline: d.cmdline };
      if (boot !== null && Number.isFinite(stat.startTimeTicks)) {
        info.startedAtMs = boot + (stat.startTimeTicks * 1000) / USER_HZ;
      }
      return { info, unit: d.unit };
    },
  };
}
