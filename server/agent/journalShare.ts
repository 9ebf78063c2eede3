/**
 * One `journalctl --follow` per unit, whatever the number of viewers: each follower process runs
 * on the GPU host at the agent's priority, so N browsers on a unit's page must not mean N of them.
 *
 * The first viewer of a unit starts the follower (continuing after its last line when it
 * reconnects, as before); a viewer joining a running one gets the live lines from then on, and,
 * when it reconnects with a cursor, what it missed: from the follower's own last lines when it
 * still holds that cursor (no journalctl read: browsers reconnecting in a loop cost nothing on
 * the GPU host), else from a one-shot read of the unit's recent journal (overlap with the live
 * lines dropped by cursor). Each viewer has a bounded queue: one that falls
 * behind is told to reconnect, never slows the others. The follower stops with its last viewer,
 * and a failing follower ends every viewer's stream with its error (they reconnect by cursor).
 */
import type { JournalEntry } from "../contract/types";
import { BoundedQueue, StreamOverflow } from "../streams/boundedQueue";

/** What the sharing needs of the systemd adapter (the real one and the simulator have both). */
export interface JournalSource {
  followJournal(name: string, signal: AbortSignal, opts?: { afterCursor?: string }): AsyncIterable<JournalEntry>;
  journal(name: string, lines: number): Promise<JournalEntry[]>;
}

/** Lines read back for a viewer joining (or rejoining) a running follower: each rejoin is a journalctl read, so kept small. */
export const REJOIN_BACKLOG_LINES = 1000;

export interface JournalShareOptions {
  /** Lines a viewer may fall behind by before it is told to reconnect. */
  queueLimit?: number;
  /** Journal streams this agent serves at most, all units together. */
  maxViewers?: number;
  /** How far back a joining viewer's missed lines are looked for (journalctl --lines). */
  backlogLines?: number;
}

export class JournalStreamError extends Error {
  constructor(
    message: string,
    readonly kind: "fell-behind" | "too-many",
  ) {
    super(message);
  }
}

interface Viewer {
  queue: BoundedQueue<JournalEntry>;
}

interface Follower {
  ctl: AbortController;
  viewers: Set<Viewer>;
  /** its last lines (at least `backlogLines` within RECENT_MAX_CHARS), oldest first: a viewer rejoining after one of them needs no read */
  recent: JournalEntry[];
  recentChars: number;
}

/** What a follower keeps of its recent lines' text at most (memory per followed unit). */
export const RECENT_MAX_CHARS = 1_000_000;

/** Add `e` to the follower's recent lines; past twice `lines` (or the text bound) the oldest go, in one splice. */
function keepRecent(f: Follower, e: JournalEntry, lines: number): void {
  f.recent.push(e);
  f.recentChars += e.message.length;
  if (f.recent.length <= lines * 2 && f.recentChars <= RECENT_MAX_CHARS) return;
  let drop = Math.max(0, f.recent.length - lines);
  let chars = f.recentChars;
  for (let i = 0; i < drop; i++) chars -= f.recent[i]!.message.length;
  while (chars > RECENT_MAX_CHARS / 2 && drop < f.recent.length - 1) chars -= f.recent[drop++]!.message.length;
  f.recent.splice(0, drop);
  f.recentChars = chars;
}

export class SharedJournals {
  private readonly followers = new Map<string, Follower>();
  private viewerCount = 0;
  private readonly queueLimit: number;
  private readonly maxViewers: number;
  private readonly backlogLines: number;

  constructor(
    private readonly source: JournalSource,
    opts: JournalShareOptions = {},
  ) {
    this.queueLimit = opts.queueLimit ?? 1000;
    this.maxViewers = opts.maxViewers ?? 500;
    this.backlogLines = opts.backlogLines ?? REJOIN_BACKLOG_LINES;
  }

  /** journalctl processes running now (one per followed unit). */
  followerCount(): number {
    return this.followers.size;
  }

  viewers(): number {
    return this.viewerCount;
  }

  /** A viewer's stream of `name`'s journal until `signal` aborts; `afterCursor` resumes after that line. */
  async *follow(name: string, signal: AbortSignal, afterCursor?: string): AsyncGenerator<JournalEntry> {
    if (signal.aborted) return;
    if (this.viewerCount >= this.maxViewers) {
      throw new JournalStreamError(`this agent already serves ${this.viewerCount} journal streams, its limit; try again later`, "too-many");
    }
    const viewer: Viewer = { queue: new BoundedQueue(this.queueLimit) };
    this.viewerCount++;
    let follower = this.followers.get(name);
    const joined = follower !== undefined;
    if (!follower) follower = this.start(name, afterCursor);
    follower.viewers.add(viewer);
    try {
      let seen: Set<string> | null = null;
      let sinceUsec = -Infinity;
      // the follower still holds the line this viewer saw last: what came after it, from memory
      // (taken before any await: every later line arrives in the viewer's queue, none twice)
      const held = joined && afterCursor ? follower.recent.findIndex((e) => e.cursor === afterCursor) : -1;
      if (held >= 0) {
        for (const e of follower.recent.slice(held + 1)) {
          if (signal.aborted) return;
          yield e;
        }
      } else if (joined && afterCursor) {
        // live lines queue up meanwhile; what came before them is read once
        const recent = await this.source.journal(name, this.backlogLines);
        const at = recent.findIndex((e) => e.cursor === afterCursor);
        const missed = at >= 0 ? recent.slice(at + 1) : recent;
        if (at >= 0) sinceUsec = recent[at]!.atUsec;
        seen = new Set(missed.map((e) => e.cursor));
        for (const e of missed) {
          if (signal.aborted) return;
          yield e;
        }
      }
      for await (const e of viewer.queue.drain(signal)) {
        if (seen?.has(e.cursor) || e.atUsec < sinceUsec || e.cursor === afterCursor) continue;
        yield e;
      }
    } catch (err) {
      if (err instanceof StreamOverflow)
        throw new JournalStreamError("this journal stream fell behind; reconnect to continue after its last line", "fell-behind");
      throw err;
    } finally {
      this.viewerCount--;
      follower.viewers.delete(viewer);
      if (follower.viewers.size === 0 && this.followers.get(name) === follower) {
        this.followers.delete(name);
        follower.ctl.abort();
      }
    }
  }

  private start(name: string, afterCursor: string | undefined): Follower {
    const follower: Follower = { ctl: new AbortController(), viewers: new Set(), recent: [], recentChars: 0 };
    this.followers.set(name, follower);
    void (async () => {
      try {
        for await (const e of this.source.followJournal(name, follower.ctl.signal, afterCursor ? { afterCursor } : {})) {
          keepRecent(follower, e, this.backlogLines);
          for (const v of follower.viewers) v.queue.push(e);
        }
        for (const v of follower.viewers) v.queue.end();
      } catch (err) {
        for (const v of follower.viewers) v.queue.fail(err);
      } finally {
        // a follower that ended on its own is not reused: the next viewer starts a new one
        if (this.followers.get(name) === follower) this.followers.delete(name);
      }
    })();
    return follower;
  }
}

const shares = new WeakMap<object, SharedJournals>();

/** The shared followers of one systemd adapter (one per agent). */
export function sharedJournalsFor(source: JournalSource, opts?: JournalShareOptions): SharedJournals {
  let s = shares.get(source);
  if (!s) shares.set(source, (s = new SharedJournals(source, opts)));
  return s;
}
