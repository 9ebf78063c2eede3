/**
 * SIGKILL for a process that holds GPU memory (`gpus.killHolder`), never for a PID that was
 * reused: the process must still be the one that started at the time the caller was shown
 * (from /proc/<pid>/stat), checked right before the signal. No shell: process.kill.
 */
import type { KillOutcome, ProcAdapter } from "../adapter";

/** Start times computed from /proc agree to the millisecond; allow for rounding. */
const START_TOLERANCE_MS = 10;

export async function killIfSame(
  procs: Pick<ProcAdapter, "inspect">,
  pid: number,
  startedAtMs: number,
  signal: (pid: number) => void = sigkill,
): Promise<KillOutcome> {
  const { info } = await procs.inspect(pid);
  if (info.state === "gone" || info.state === "zombie") return { killed: false, reason: `process ${pid} is gone already` };
  if (info.startedAtMs === undefined) return { killed: false, reason: `cannot tell when process ${pid} started (no /proc/${pid}/stat): not killing it` };
  if (Math.abs(info.startedAtMs - startedAtMs) > START_TOLERANCE_MS) {
    return { killed: false, reason: `PID ${pid} is now a different process (started ${new Date(info.startedAtMs).toISOString()}): not killing it` };
  }
  try {
    signal(pid);
    return { killed: true };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return { killed: false, reason: `process ${pid} is gone already` };
    if (code === "EPERM") return { killed: false, reason: `not permitted to kill process ${pid} (the agent needs root or the same user)` };
    return { killed: false, reason: `kill ${pid} failed: ${(err as Error).message}` };
  }
}

function sigkill(pid: number): void {
  process.kill(pid, "SIGKILL");
}

/** The real ProcAdapter with `killProcess` and `meminfo` added. */
export function withProcessControl<P extends ProcAdapter>(
  procs: P,
  meminfo: ProcAdapter["meminfo"],
): P & Required<Pick<ProcAdapter, "killProcess" | "meminfo">> {
  return Object.assign(procs, {
    killProcess: (pid: number, startedAtMs: number) => killIfSame(procs, pid, startedAtMs),
    meminfo: meminfo ?? (async () => null),
  });
}
