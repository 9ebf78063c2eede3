/**
 * The machine a benchmark ran on, printed at the top of every bench script so each table can be
 * read against it: CPU model, cores, RAM, kernel, Node, the load average when it started, the
 * date and the commit.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";

export interface Machine {
  cpu: string;
  cores: number;
  ramGiB: number;
  kernel: string;
  node: string;
  load: [number, number, number];
  date: string;
  commit: string;
}

function cpuModel(): string {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"));
    if (m) return m[1]!.trim();
  } catch {
    /* not Linux */
  }
  return os.cpus()[0]?.model ?? "unknown";
}

function commit(): string {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    return sha || "unknown";
  } catch {
    return "unknown";
  }
}

export function machine(): Machine {
  const load = os.loadavg();
  return {
    cpu: cpuModel(),
    cores: os.cpus().length,
    ramGiB: os.totalmem() / 2 ** 30,
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    load: [load[0]!, load[1]!, load[2]!],
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    commit: commit(),
  };
}

export function machineLine(m: Machine = machine()): string {
  return (
    `machine: ${m.cpu}, ${m.cores} cores, ${m.ramGiB.toFixed(0)} GiB RAM, ${m.kernel}, Node ${m.node}; ` +
    `load average ${m.load.map((l) => l.toFixed(2)).join(" ")}; ${m.date}, commit ${m.commit}`
  );
}

/** The title of a bench and the machine it runs on. */
export function printHeader(title: string, smoke: boolean): void {
  console.log(`## ${title}${smoke ? " (--smoke: tiny sizes, numbers mean nothing)" : ""}`);
  console.log(machineLine());
  console.log("");
}
