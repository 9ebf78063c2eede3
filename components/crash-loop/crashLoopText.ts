/**
 * The crash-loop brake in words: "crash loop: 7 restarts in 10 min", and, when systemd's start
 * limit can never end it, "… — systemd will never stop it". Pure, tested beside it.
 */
import { formatDurationWords, plural } from "@/server/contract/format";
import type { CrashLoopMarker } from "@/server/contract/faults";

/** "7 restarts in 10 min" */
export function crashLoopCount(c: CrashLoopMarker): string {
  return `${plural(c.restarts, "restart")} in ${formatDurationWords(c.windowMs)}`;
}

/** Endless: Restart= with no start limit that can trip; null (settings not read yet) is not called endless. */
export function crashLoopEndless(c: CrashLoopMarker): boolean {
  return c.startLimitStops === false;
}

export function crashLoopText(c: CrashLoopMarker): string {
  return `crash loop: ${crashLoopCount(c)}${crashLoopEndless(c) ? " — systemd will never stop it" : ""}`;
}
