/**
 * Open browser streams (SSE subscriptions) outlive the request that authenticated them. Each
 * one re-checks its session every `recheckMs` and at once when the panel signs someone out or a
 * password changes here, and ends when the session is gone: a password change or a disabled
 * account must not leave a live stream running (one of Uptime Kuma's CVEs). Changes made from
 * the CLI in another process are noticed at the next periodic check.
 */
export class SessionStreams {
  private readonly listeners = new Set<() => void>();
  constructor(readonly recheckMs = 15_000) {}

  /** Something about sessions changed: every open stream re-checks now. */
  changed(): void {
    for (const l of [...this.listeners]) l();
  }

  /**
   * A signal that aborts with `base`, or when `stillValid()` turns false (then `ended()` is
   * true). Call `dispose()` when the stream ends.
   */
  bind(base: AbortSignal, stillValid: () => boolean): { signal: AbortSignal; ended(): boolean; dispose(): void } {
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
        clearInterval(timer);
        this.listeners.delete(check);
        base.removeEventListener("abort", onBase);
      },
    };
  }

  get openCount(): number {
    return this.listeners.size;
  }
}
