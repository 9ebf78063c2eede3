/**
 * A push source (listener callbacks, a client subscription) turned into an async generator, with
 * a bound: a consumer that cannot keep up is told so (`StreamOverflow`) instead of growing memory
 * without limit. Used by every live stream, in the agent and in the panel.
 */

/** Thrown by `drain()` once more than `limit` items waited: the consumer should start afresh. */
export class StreamOverflow extends Error {
  constructor(readonly limit: number) {
    super(`stream fell behind by more than ${limit} events`);
    this.name = "StreamOverflow";
  }
}

export class BoundedQueue<T> {
  private items: T[] = [];
  private overflowed = false;
  private failure: { error: unknown } | null = null;
  private ended = false;
  private wake: (() => void) | null = null;

  constructor(readonly limit: number) {}

  get length(): number {
    return this.items.length;
  }

  /** Adds an item; beyond the limit the queue is marked overflowed and the item dropped. */
  push(item: T): void {
    if (this.items.length >= this.limit) this.overflowed = true;
    else this.items.push(item);
    this.notify();
  }

  /** The source failed: `drain()` throws `error` once the items queued before it are out. */
  fail(error: unknown): void {
    this.failure ??= { error };
    this.notify();
  }

  /** The source ended: `drain()` returns once the queued items are out. */
  end(): void {
    this.ended = true;
    this.notify();
  }

  /** Drops queued items that match (e.g. those a replay already sent). */
  drop(matches: (item: T) => boolean): void {
    this.items = this.items.filter((i) => !matches(i));
  }

  clear(): void {
    this.items.length = 0;
  }

  /** After an overflow: drop what waited and accept items again (the consumer starts afresh). */
  recover(): void {
    this.items.length = 0;
    this.overflowed = false;
  }

  /**
   * Yields items as they come until `signal` aborts (then it returns) or the source ends or
   * fails. Throws `StreamOverflow` as soon as the bound was passed: what is still queued is
   * stale by then, so it is not sent.
   */
  async *drain(signal: AbortSignal): AsyncGenerator<T> {
    const onAbort = () => this.notify();
    signal.addEventListener("abort", onAbort);
    try {
      while (!signal.aborted) {
        if (this.overflowed) throw new StreamOverflow(this.limit);
        if (this.items.length > 0) {
          yield this.items.shift()!;
          continue;
        }
        if (this.failure) throw this.failure.error;
        if (this.ended) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  private notify(): void {
    this.wake?.();
  }
}
