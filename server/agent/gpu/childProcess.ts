/** Small helpers for the nvidia-smi children the sampler starts (sampler.ts, computeApps.ts). */
import type { ChildProcess } from "node:child_process";

/** How much of a child's stderr (and stray output) is kept for its failure message. */
export const OUTPUT_TAIL_CHARS = 4096;

/** A spawn error's code (ENOENT, EACCES …), if it has one. */
export function errCode(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : undefined;
}

/** Milliseconds as "1.5 s", for status lines. */
export function fmtSec(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** SIGKILL `child` and resolve once it closed (or after `timeoutMs`, or at once if it is gone already). */
export function killAndWait(child: ChildProcess, timeoutMs = 2000): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return resolve();
    const t = setTimeout(resolve, timeoutMs);
    child.once("close", () => {
      clearTimeout(t);
      resolve();
    });
    child.kill("SIGKILL");
  });
}
