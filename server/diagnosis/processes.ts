/**
 * The unit's processes as evidence: command lines (also while systemd is still spawning them),
 * the control process a phase runs, and whether what runs polls nvidia-smi.
 */
import { formatCmdline } from "../contract/format";
import type { DiagnosisContext } from "./context";

/**
 * A process's command line, or null while it is a child systemd has forked but not yet exec'd:
 * /proc then shows systemd's own argv (`/lib/systemd/systemd --system …`), or that argv area
 * rewritten to "(sleep)" and padded with empty strings (both seen on systemd 252).
 */
export function execArgv(cmdline: readonly string[]): string[] | null {
  let end = cmdline.length;
  while (end > 0 && cmdline[end - 1] === "") end--;
  if (end === 0) return null;
  if (end === 1 && /^\(.+\)$/.test(cmdline[0])) return null;
  // Even earlier, right after the fork, it still shows PID 1's own command line.
  if (/(^|\/)(systemd|init)$/.test(cmdline[0])) return null;
  return cmdline.slice(0, end);
}

/** For evidence: the command line, or what is known while systemd is still spawning it. */
export function processCommandText(cmdline: readonly string[], max: number): string {
  const argv = execArgv(cmdline);
  if (argv) return formatCmdline(argv, max);
  return cmdline[0] ? `${cmdline[0]} (being spawned by systemd)` : "command line unknown";
}

export interface ControlCommand {
  argv: string[] | null;
  /** argv was read from /proc (not guessed from the unit file). */
  fromProc: boolean;
  pid: number;
  startedAtMs: number | null;
}

/** The command a control process runs, from /proc, else from the unit's single ExecStartPre. */
export function controlCommand(ctx: DiagnosisContext): ControlCommand {
  const u = ctx.unit;
  const proc = u.controlProcess;
  const argv = proc ? execArgv(proc.cmdline) : null;
  if (proc && argv) return { argv, fromProc: true, pid: proc.pid, startedAtMs: proc.startedAtMs ?? null };
  const fallback = u.subState === "start-pre" && u.execStartPre.length === 1 ? u.execStartPre[0].argv : null;
  return { argv: fallback, fromProc: false, pid: proc?.pid ?? u.controlPid, startedAtMs: proc?.startedAtMs ?? null };
}

/** Whether what runs now (control process, its children, the ExecStartPre lines) polls nvidia-smi. */
export function pollsNvidiaSmi(ctx: DiagnosisContext, argv: readonly string[] | null): boolean {
  const mentions = (args: readonly string[]) => args.some((a) => a.includes("nvidia-smi"));
  if (argv && mentions(argv)) return true;
  if (ctx.unit.processes.some((p) => p.pid !== ctx.unit.mainPid && mentions(p.cmdline))) return true;
  // Without a command line from /proc, fall back to the ExecStartPre definitions.
  if (!argv && ctx.unit.execStartPre.some((c) => mentions([c.path, ...c.argv]))) return true;
  return false;
}
