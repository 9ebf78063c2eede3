/**
 * The agent's one live journal reader for readiness: a single `journalctl --follow` over every
 * unit that runs an engine (never one per viewer, and separate from the browsers' journal
 * streams). When the set of units changes it starts again after the last entry it delivered,
 * so nothing is read twice or lost; when journalctl fails it retries with backoff and says so
 * once (readiness then rests on probes).
 */
import type { JournalEntry } from "../../contract/types";
import type { SystemdAdapter } from "../adapter";

/** Units one reader follows at most (one argv element each). */
export const MAX_FOLLOWED_UNITS = 500;

type Follow = NonNullable<SystemdAdapter["followUnitsJournal"]>;

export class JournalFeed {
  private names: string[] = [];
  private ctl: AbortController | null = null;
  private lastCursor: string | null = null;
  private retry: ReturnType<typeof setTimeout> | null = null;
  private backoffMs = 0;
  private closed = false;
  private complained = false;

  constructor(
    private readonly follow: Follow | undefined,
    private readonly onEntry: (e: JournalEntry) => void,
    private readonly log: (msg: string) => void,
    private readonly retryMs = { min: 2000, max: 60_000 },
  ) {}

  /** Follow exactly these units from now on; `afterCursor`: continue after that entry (a backlog's last). */
  setUnits(names: readonly string[], afterCursor?: string | null): void {
    const next = [...new Set(names)].sort().slice(0, MAX_FOLLOWED_UNITS);
    if (afterCursor && !this.lastCursor) this.lastCursor = afterCursor;
    if (next.length === this.names.length && next.every((n, i) => n === this.names[i])) return;
    this.names = next;
    this.restart();
  }

  followed(): readonly string[] {
    return this.names;
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.ctl?.abort();
  }

  private restart(): void {
    this.ctl?.abort();
    this.ctl = null;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    if (this.closed || !this.follow || this.names.length === 0) return;
    const ctl = new AbortController();
    this.ctl = ctl;
    void this.run([...this.names], ctl);
  }

  private async run(names: string[], ctl: AbortController): Promise<void> {
    let problem: string | null = null;
    try {
      for await (const entry of this.follow!(names, ctl.signal, this.lastCursor ? { afterCursor: this.lastCursor } : {})) {
        if (ctl.signal.aborted) return;
        this.lastCursor = entry.cursor;
        this.backoffMs = 0;
        if (this.complained) {
          this.complained = false;
          this.log("readiness: reading the engines' journal works again");
        }
        this.onEntry(entry);
      }
      problem = "journalctl --follow ended";
    } catch (err) {
      problem = (err as Error).message;
    }
    if (ctl.signal.aborted || this.closed) return;
    if (!this.complained) {
      this.complained = true;
      this.log(`readiness: cannot follow the engines' journal (${problem}); load stages are unknown until it works, probes go on`);
    }
    this.backoffMs = Math.min(this.retryMs.max, this.backoffMs === 0 ? this.retryMs.min : this.backoffMs * 2);
    this.retry = setTimeout(() => {
      this.retry = null;
      if (this.ctl === ctl) this.restart();
    }, this.backoffMs);
    this.retry.unref?.();
  }
}
