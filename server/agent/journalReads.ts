/**
 * Journal reads on the GPU host are bounded: each is a `journalctl` process, and diagnoses,
 * crash-loop reports (viewers may ask for both) and journal pages (operators) each start one. At
 * most `concurrent` run at once (8), up to `queued` more wait their turn (32), and a read beyond
 * that is refused with TOO_MANY_REQUESTS and a sentence, never a 41st process.
 *
 * Diagnoses and crash-loop reports are also cached briefly (`BriefCache`, ~3 s): a page that
 * many people have open, or a caller asking in a loop, costs one read per unit every few seconds.
 */
import { TRPCError } from "@trpc/server";
import type { HostAdapter } from "./adapter";

export const JOURNAL_READS_CONCURRENT = 8;
export const JOURNAL_READS_QUEUED = 32;

export class JournalReads {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(
    readonly concurrent = JOURNAL_READS_CONCURRENT,
    readonly queued = JOURNAL_READS_QUEUED,
  ) {}

  /** Run `read` when a slot is free; throws TOO_MANY_REQUESTS when the queue is full too. */
  async run<T>(read: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrent) {
      if (this.waiting.length >= this.queued) {
        throw new TRPCError({
          code: "TOO_MANY_REQUESTS",
          message: `This host is busy reading its journal (${this.running} reads running, ${this.waiting.length} waiting); try again in a few seconds.`,
        });
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await read();
    } finally {
      const next = this.waiting.shift();
      // the slot passes straight to the next in line
      if (next) next();
      else this.running--;
    }
  }

  get stats(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}

/** Every journal read of `host` (pages, diagnoses, crash-loop reports, a shared follower's backlog) through one `JournalReads`. */
export function limitJournalReads(host: HostAdapter, reads = new JournalReads()): JournalReads {
  const systemd = host.systemd;
  const journal = systemd.journal.bind(systemd);
  systemd.journal = (name, lines) => reads.run(() => journal(name, lines));
  // searches, histograms and downloads (units.journal with filters) take a slot too
  const search = systemd.searchJournal?.bind(systemd);
  if (search) systemd.searchJournal = (q, opts) => reads.run(() => search(q, opts));
  const unitFile = systemd.readUnitFile?.bind(systemd);
  if (unitFile) systemd.readUnitFile = (name) => reads.run(() => unitFile(name));
  return reads;
}

/** Answers kept for `ttlMs` per key (and one read in flight per key shared by its callers); at most `max` keys. */
export class BriefCache<T> {
  private readonly entries = new Map<string, { at: number; value: Promise<T> }>();
  constructor(
    readonly ttlMs = 3_000,
    private readonly max = 1_000,
    private readonly clock: () => number = Date.now,
  ) {}

  get(key: string, load: () => Promise<T>): Promise<T> {
    const now = this.clock();
    const hit = this.entries.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    if (this.entries.size >= this.max) this.entries.clear();
    const value = load();
    this.entries.set(key, { at: now, value });
    // a failure is not kept: the next caller tries again
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key);
    });
    return value;
  }
}
