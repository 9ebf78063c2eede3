/**
 * Open browser streams (SSE subscriptions) outlive the request that authenticated them. Each
 * one re-checks its session every `recheckMs` and at once when the panel signs someone out or a
 * password changes here, and ends when the session is gone: a password change or a disabled
 * account must not leave a live stream running (one of Uptime Kuma's CVEs). Changes made from
 * the CLI in another process are noticed at the next periodic check.
 *
 * Every open stream holds memory here and, for a journal, a `journalctl --follow` on the GPU host:
 * at most `perOwner` streams per session (16 by default) and `total` for the whole panel (2,000).
 * A stream beyond that is refused with a clear error. Streams without an owner (demo mode, where
 * everyone shares one identity) count only towards the panel's total.
 */
export interface StreamLimits {
  perOwner: number;
  total: number;
}

export const DEFAULT_STREAM_LIMITS: Readonly<StreamLimits> = Object.freeze({ perOwner: 16, total: 2_000 });

export class StreamLimitError extends Error {}

export class SessionStreams {
  private readonly listeners = new Set<() => void>();
  private readonly perOwner = new Map<string, number>();
  private open = 0;
  readonly limits: Readonly<StreamLimits>;
  constructor(
    readonly recheckMs = 15_000,
    limits: Partial<StreamLimits> = {},
  ) {
    this.limits = Object.freeze({ ...DEFAULT_STREAM_LIMITS, ...limits });
  }

  /** Something about sessions changed: every open stream re-checks now. */
  changed(): void {
    for (const l of [...this.listeners]) l();
  }

  /**
   * A signal that aborts with `base`, or when `stillValid()` turns false (then `ended()` is
   * true). Call `dispose()` when the stream ends. Throws StreamLimitError when `owner` (a session)
   * or the panel already has as many streams open as allowed.
   */
  bind(base: AbortSignal, stillValid: () => boolean, owner: string | null = null): { signal: AbortSignal; ended(): boolean; dispose(): void } {
    const release = this.take(owner);
    const ctl = new AbortController();
    let revoked = false;
    const check = () => {
      if (ctl.signal.aborted) return;
      let ok = false;
      try {
        ok = stillValid();
      } catch {
        ok = false;
      }
      if (!ok) {
        revoked = true;
        ctl.abort();
      }
    };
    const onBase = () => ctl.abort();
    if (base.aborted) ctl.abort();
    else base.addEventListener("abort", onBase, { once: true });
    const timer = setInterval(check, this.recheckMs);
    timer.unref?.();
    this.listeners.add(check);
    return {
      signal: ctl.signal,
      ended: () => revoked,
      dispose: () => {
        release();
        clearInterval(timer);
        this.listeners.delete(check);
        base.removeEventListener("abort", onBase);
      },
    };
  }

  get openCount(): number {
    return this.listeners.size;
  }

  private take(owner: string | null): () => void {
    const mine = owner === null ? 0 : (this.perOwner.get(owner) ?? 0);
    if (owner !== null && mine >= this.limits.perOwner) {
      throw new StreamLimitError(
        `This session already has ${mine} live streams open (at most ${this.limits.perOwner}, GPUDECK_STREAMS_PER_SESSION); close some tabs or pages and try again.`,
      );
    }
    if (this.open >= this.limits.total) {
      throw new StreamLimitError(`The panel has ${this.open} live streams open, its limit (GPUDECK_STREAMS_MAX); try again later.`);
    }
    this.open++;
    if (owner !== null) this.perOwner.set(owner, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open--;
      if (owner === null) return;
      const left = (this.perOwner.get(owner) ?? 1) - 1;
      if (left > 0) this.perOwner.set(owner, left);
      else this.perOwner.delete(owner);
    };
  }
}
