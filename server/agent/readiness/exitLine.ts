/**
 * systemd's own lines about how a unit's main process ended (PID 1 writes them to the unit's
 * journal): "Main process exited, code=killed, status=9/KILL", "… code=exited, status=1/FAILURE",
 * "… code=dumped, status=11/SEGV", "A process of this unit has been killed by the OOM killer.".
 * An engine that dies while loading without an error line of its own is explained by these.
 */

/** The words for how the main process ended, or null when the line is not such a line. */
export function systemdExitOf(message: string): string | null {
  const m = /Main process exited, code=(exited|killed|dumped), status=(\d+)(?:\/(\w+))?/.exec(message);
  if (m) {
    const status = `${m[2]}${m[3] ? `/${m[3]}` : ""}`;
    if (m[1] === "exited") return `exit code ${status}`;
    if (m[1] === "killed") return `killed by signal ${status}`;
    return `core dumped (signal ${status})`;
  }
  if (/killed by the OOM killer|Failed with result 'oom-kill'/.test(message)) return "killed by the kernel's OOM killer";
  return null;
}

/** "the engine died while loading weights (killed by signal 9/KILL) without logging an error" */
export function diedWords(stage: string | null, exit: string | null, cause: string | null): string {
  const during = stage && stage !== "starting" ? ` in the stage "${stage}"` : " during start-up";
  const how = exit ? ` (${exit})` : "";
  return cause ? `${cause}; the engine then exited${how}` : `the engine exited${during}${how} without logging an error`;
}
