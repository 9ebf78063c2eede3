/**
 * CPU time and memory of processes from /proc: a process and everything it started (its tree),
 * so "the panel" counts every process the panel runs. CPU of a tree is the sum of user + system
 * time of each live process plus what its reaped children used (cutime + cstime): a child that
 * ends between two readings moves into its parent's count, so differences stay right.
 */
import { readdirSync, readFileSync } from "node:fs";

/** USER_HZ: the unit of the times in /proc/<pid>/stat (100 on every Linux this runs on). */
const TICKS_PER_S = 100;

interface Stat {
  pid: number;
  ppid: number;
  /** utime + stime + cutime + cstime, seconds */
  cpuS: number;
}

function readStat(pid: number): Stat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // "pid (comm) state ppid …": comm may hold spaces and parentheses; fields follow the last ')'
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  return { pid, ppid: Number(f[1]), cpuS: ticks / TICKS_PER_S };
}

function allStats(): Stat[] {
  const out: Stat[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const s = readStat(Number(name));
    if (s) out.push(s);
  }
  return out;
}

/** `root` and every process below it, as they are now. */
export function processTree(root: number): number[] {
  const stats = allStats();
  const children = new Map<number, number[]>();
  for (const s of stats) {
    const list = children.get(s.ppid) ?? [];
    list.push(s.pid);
    children.set(s.ppid, list);
  }
  if (!stats.some((s) => s.pid === root)) return [];
  const out: number[] = [];
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop()!;
    out.push(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** CPU seconds used so far by the trees of `roots` (see the top of this file). */
export function treeCpuSeconds(...roots: number[]): number {
  let sum = 0;
  for (const root of roots) for (const pid of processTree(root)) sum += readStat(pid)?.cpuS ?? 0;
  return sum;
}

/** CPU seconds of one process alone (utime + stime, without its children). */
export function ownCpuSeconds(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / TICKS_PER_S;
  } catch {
    return 0;
  }
}

/** CPU seconds a cgroup (v2) used so far, from its cpu.stat (0 when it is gone). */
export function cgroupCpuSeconds(dir: string): number {
  try {
    const m = /^usage_usec (\d+)$/m.exec(readFileSync(`${dir}/cpu.stat`, "utf8"));
    return m ? Number(m[1]) / 1e6 : 0;
  } catch {
    return 0;
  }
}

/** Resident memory (VmRSS) of one process, bytes; 0 when it is gone. */
export function rssBytes(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Resident memory of the trees of `roots`, summed, bytes. */
export function treeRssBytes(...roots: number[]): number {
  let sum = 0;
  for (const root of roots) for (const pid of processTree(root)) sum += rssBytes(pid);
  return sum;
}

/** The command line of a process ("" when gone). */
export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

/** CPU use of process trees over a window: start() … stop() → CPU seconds and the share of one core. */
export class CpuWindow {
  private startCpu = 0;
  private startMs = 0;
  constructor(private readonly roots: () => number[]) {}

  start(): void {
    this.startCpu = treeCpuSeconds(...this.roots());
    this.startMs = performance.now();
  }

  stop(): { cpuS: number; wallS: number; corePct: number } {
    const cpuS = treeCpuSeconds(...this.roots()) - this.startCpu;
    const wallS = (performance.now() - this.startMs) / 1000;
    return { cpuS, wallS, corePct: wallS > 0 ? (100 * cpuS) / wallS : 0 };
  }
}

/** Peak of a sampled value (RSS of a tree …) while a window runs. */
export class PeakSampler {
  private timer: ReturnType<typeof setInterval> | null = null;
  peak = 0;
  constructor(
    private readonly read: () => number,
    private readonly everyMs = 250,
  ) {}

  start(): void {
    this.peak = this.read();
    this.timer = setInterval(() => (this.peak = Math.max(this.peak, this.read())), this.everyMs);
    this.timer.unref();
  }

  stop(): number {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.peak = Math.max(this.peak, this.read());
    return this.peak;
  }
}
