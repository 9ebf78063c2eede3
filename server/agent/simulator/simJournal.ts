/**
 * The simulated journal: the last lines of every unit, in memory, with cursors, and a live tail
 * that can resume after a cursor (as journalctl --after-cursor does).
 */
import { EventEmitter } from "node:events";
import type { JournalEntry } from "../../contract/types";

const JOURNAL_KEEP = 2000;

export class SimJournal {
  private lines: JournalEntry[] = [];
  private seq = 0;
  private readonly bus = new EventEmitter();
  private closed = false;

  constructor() {
    this.bus.setMaxListeners(0);
  }

  append(unit: string, message: string, priority: number, pid: number | null, jobResult: string | undefined, atUsec: number): void {
    const entry: JournalEntry = {
      cursor: `s=5eed;i=${(++this.seq).toString(16)}`,
      atUsec,
      unit,
      priority,
      pid,
      message,
      ...(jobResult ? { jobResult } : {}),
    };
    this.lines.push(entry);
    if (this.lines.length > JOURNAL_KEEP) this.lines.splice(0, this.lines.length - JOURNAL_KEEP);
    this.bus.emit("line", entry);
  }

  /** Every line kept, oldest first (searches filter it: ./simJournalSearch.ts). */
  all(): readonly JournalEntry[] {
    return this.lines;
  }

  /** The unit's last `lines` lines. */
  read(unit: string, lines: number): JournalEntry[] {
    const mine = this.lines.filter((l) => l.unit === unit);
    return mine.slice(Math.max(0, mine.length - lines));
  }

  follow(unit: string, signal: AbortSignal, opts: { afterCursor?: string } = {}): AsyncIterable<JournalEntry> {
    return this.followWhere((u) => u === unit, signal, opts);
  }

  /** One tail over every unit `wanted` accepts (the readiness reader follows all engines at once). */
  async *followWhere(wanted: (unit: string) => boolean, signal: AbortSignal, opts: { afterCursor?: string } = {}): AsyncIterable<JournalEntry> {
    const queue: JournalEntry[] = [];
    if (opts.afterCursor) {
      // what a reconnecting client missed (nothing when its line is no longer kept)
      const mine = this.lines.filter((l) => wanted(l.unit));
      const at = mine.findIndex((l) => l.cursor === opts.afterCursor);
      if (at >= 0) queue.push(...mine.slice(at + 1));
    }
    let wake: (() => void) | null = null;
    const onLine = (e: JournalEntry) => {
      if (!wanted(e.unit)) return;
      queue.push(e);
      wake?.();
    };
    const onAbort = () => wake?.();
    this.bus.on("line", onLine);
    signal.addEventListener("abort", onAbort);
    try {
      while (!signal.aborted && !this.closed) {
        if (queue.length === 0) await new Promise<void>((r) => (wake = r));
        wake = null;
        while (queue.length > 0) yield queue.shift()!;
      }
    } finally {
      this.bus.off("line", onLine);
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** Live tails stop at their next wake-up (a line no longer comes: listeners are gone). */
  close(): void {
    this.closed = true;
    this.bus.removeAllListeners();
  }
}
