/**
 * Open browser streams (SSE subscriptions) outlive the request that authenticated them. Each
 * one re-checks its session every `recheckMs` and at once when a session or account changes, on
 * this replica or any other, or from the CLI (`changed()`, from the panel's own calls and from
 * `sessions` panel events), and ends when the session is gone: a password change or a disabled
 * account must not leave a live stream running (one of Uptime Kuma's CVEs).
 *
 * A check is a database read: one at a time per stream, bounded by `checkTimeoutMs`. A check that
 * cannot answer (the database is away, or too slow) leaves the stream open and is tried again at
 * the next period: agent data does not go through the database, and nobody can end a session
 * while it is away. An answer of "no longer valid", or a check that fails otherwise, ends a stream.
 *
 * Every open stream holds memory here and, for a journal, a `journalctl --follow` on the GPU host:
 * at most `perOwner` streams per session (16 by default), `perUser` per user across all their
 * sessions (32: one account signed in many times must not hold the panel's streams), and `total`
 * for the whole panel (2,000). A stream beyond that is refused with a clear error. Streams without an owner (demo mode, where
 * everyone shares one identity) count only towards the panel's total.
 */
import { isDatabaseUnreachable } from "../store/unavailable";

export interface StreamLimits {
  perOwner: number;
  /** across every session of one user (GPUDECK_STREAMS_PER_USER) */
  perUser: number;
  total: number;
}

export const DEFAULT_STREAM_LIMITS: Readonly<StreamLimits> = Object.freeze({ perOwner: 16, perUser: 32, total: 2_000 });

export class StreamLimitError extends Error {}

/** Whose streams a change concerns: a user's (by id for sessions, by name for proxy identities), or everyone's. */
export interface StreamOwner {
  userId: number | null;
  username: string | null;
}

type Listener = { check: () => void; owner: StreamOwner | null };

const sameUser = (a: StreamOwner | null, b: StreamOwner): boolean =>
  a === null ||
  (b.userId !== null && a.userId === b.userId) ||
  (b.username !== null && a.username !== null && a.username.toLowerCase() === b.username.toLowerCase());

export class SessionStreams {
  private readonly listeners = new Set<Listener>();
  private readonly perOwner = new Map<string, number>();
  private readonly perUser = new Map<string, number>();
  private open = 0;
  readonly limits: Readonly<StreamLimits>;
  constructor(
    readonly recheckMs = 15_000,
    limits: Partial<StreamLimits> = {},
    readonly checkTimeoutMs = 10_000,
  ) {
    this.limits = Object.freeze({ ...DEFAULT_STREAM_LIMITS, ...limits });
  }

  /** Something about sessions changed: the open streams of that user (or every stream) re-check now. */
  changed(who?: StreamOwner): void {
    for (const l of [...this.listeners]) if (!who || sameUser(l.owner, who)) l.check();
  }

  /**
   * A signal that aborts with `base`, or when `stillValid()` answers false (then `ended()` is
   * true). Call `dispose()` when the stream ends. Throws StreamLimitError when `owner` (a session)
   * or the panel already has as many streams open as allowed. `user`: whose stream it is, for
   * `changed(user)`.
   */
  bind(
    base: AbortSignal,
    stillValid: () => boolean | Promise<boolean>,
    owner: string | null = null,
    user: StreamOwner | null = null,
  ): { signal: AbortSignal; ended(): boolean; dispose(): void } {
    const release = this.take(owner, user && (user.username ?? user.userId) !== null ? userKey(user) : null);
    const ctl = new AbortController();
    let revoked = false;
    let checking = false;
    let again = false;
    const check = () => {
      if (ctl.signal.aborted) return;
      if (checking) {
        again = true; // a change arrived during a check: look once more after it
        return;
      }
      checking = true;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<"unknown">((r) => (timer = setTimeout(() => r("unknown"), this.checkTimeoutMs)));
      void Promise.race([Promise.resolve().then(stillValid), timedOut])
        // the database away: unknown, keep the stream; any other failure fails closed
        .catch((err: unknown) => (isDatabaseUnreachable(err) ? ("unknown" as const) : false))
        .then((ok) => {
          clearTimeout(timer);
          checking = false;
          if (ok === false && !ctl.signal.aborted) {
            revoked = true;
            ctl.abort();
          } else if (again) {
            again = false;
            check();
          }
        });
    };
    const onBase = () => ctl.abort();
    if (base.aborted) ctl.abort();
    else base.addEventListener("abort", onBase, { once: true });
    const timer = setInterval(check, this.recheckMs);
    timer.unref?.();
    const listener: Listener = { check, owner: user };
    this.listeners.add(listener);
    return {
      signal: ctl.signal,
      ended: () => revoked,
      dispose: () => {
        release();
        clearInterval(timer);
        this.listeners.delete(listener);
        base.removeEventListener("abort", onBase);
      },
    };
  }

  get openCount(): number {
    return this.listeners.size;
  }

  private take(owner: string | null, user: string | null): () => void {
    const mine = owner === null ? 0 : (this.perOwner.get(owner) ?? 0);
    if (owner !== null && mine >= this.limits.perOwner) {
      throw new StreamLimitError(
        `This session already has ${mine} live streams open (at most ${this.limits.perOwner}, GPUDECK_STREAMS_PER_SESSION); close some tabs or pages and try again.`,
      );
    }
    const theirs = user === null ? 0 : (this.perUser.get(user) ?? 0);
    if (user !== null && theirs >= this.limits.perUser) {
      throw new StreamLimitError(
        `This account already has ${theirs} live streams open across its sessions (at most ${this.limits.perUser}, GPUDECK_STREAMS_PER_USER); close some tabs, or sign out elsewhere, and try again.`,
      );
    }
    if (this.open >= this.limits.total) {
      throw new StreamLimitError(`The panel has ${this.open} live streams open, its limit (GPUDECK_STREAMS_MAX); try again later.`);
    }
    this.open++;
    const takeOne = (counts: Map<string, number>, key: string | null) => {
      if (key === null) return () => undefined;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      return () => {
        const left = (counts.get(key) ?? 1) - 1;
        if (left > 0) counts.set(key, left);
        else counts.delete(key);
      };
    };
    const releases = [takeOne(this.perOwner, owner), takeOne(this.perUser, user)];
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open--;
      for (const r of releases) r();
    };
  }
}

/** One key per account: by name (sessions and proxy identities of one user agree), else by id. */
function userKey(user: StreamOwner): string {
  return user.username !== null ? `name:${user.username.toLowerCase()}` : `id:${user.userId}`;
}
