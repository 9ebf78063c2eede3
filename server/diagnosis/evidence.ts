/**
 * Evidence and wording every case shares: the state line, journal lines, restart count, and
 * small text helpers.
 */
import type { JournalEntry } from "../contract/types";
import type { Evidence } from "../contract/diagnosis";
import { formatClock, formatDurationWords, formatState, formatTimestamp, truncate } from "../contract/format";
import type { DiagnosisContext } from "./context";

/** How many journal lines a diagnosis quotes. */
export const LOG_LINES = 3;

export const quote = (text: string): string => `\`${text}\``;
export const capitalize = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

export function ago(ctx: DiagnosisContext, atMs: number): string {
  return `${formatDurationWords(ctx.now - atMs)} ago`;
}

export function stateEvidence(ctx: DiagnosisContext): Evidence {
  const entered = ctx.stateEnteredMs;
  return {
    label: "State",
    value:
      entered === null ? formatState(ctx.unit) : `${formatState(ctx.unit)} for ${formatDurationWords(ctx.now - entered)} (since ${formatTimestamp(entered)})`,
    source: "systemd",
  };
}

export function logEvidence(entries: readonly JournalEntry[]): Evidence[] {
  return entries.map((e) => ({
    label: `Log ${formatClock(e.atUsec / 1000)}${e.pid !== null && e.pid !== 1 ? ` [${e.pid}]` : ""}`,
    value: truncate(e.message, 240),
    source: "journal" as const,
  }));
}

export function restartCountEvidence(ctx: DiagnosisContext): Evidence[] {
  return ctx.unit.nRestarts > 0 ? [{ label: "NRestarts", value: String(ctx.unit.nRestarts), source: "systemd" }] : [];
}
