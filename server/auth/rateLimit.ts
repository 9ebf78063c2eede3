/**
 * Login rate limiting: sliding windows kept in memory (a panel restart forgets them; that is
 * acceptable for throttling online guessing). Three buckets:
 *   - user+address: stops guessing one account from one place (default 5 / 15 min);
 *   - address: stops spraying many accounts from one place (default 20 / 15 min);
 *   - user: stops guessing one account from many places. Off by default: anyone can fill it from
 *     anywhere and so lock a named admin out; each source is held by the first two buckets (the
 *     panel takes the address from X-Forwarded-For behind a trusted proxy, so clients behind one
 *     proxy do not share a bucket).
 * IPv6 addresses are bucketed by /64, which one client typically holds whole.
 *
 * An attempt takes a slot *before* the password is checked, so a burst of parallel requests
 * cannot all slip through while the first ones are still hashing; success gives the slot back.
 */
import { isIP } from "node:net";
import { systemClock, type Clock, type Ms } from "./types";

export interface WindowLimit {
  max: number;
  windowMs: Ms;
}

export interface LoginRateLimits {
  perUserAndAddress: WindowLimit;
  perAddress: WindowLimit;
  /** null turns the per-account bucket off. */
  perUser: WindowLimit | null;
}

export const DEFAULT_LOGIN_RATE_LIMITS: Readonly<LoginRateLimits> = Object.freeze({
  perUserAndAddress: { max: 5, windowMs: 15 * 60 * 1000 },
  perAddress: { max: 20, windowMs: 15 * 60 * 1000 },
  perUser: null,
});

export type RateLimitScope = "user+address" | "address" | "user";

export type LoginAttempt =
  | {
      allowed: true;
      /** Call after a successful sign-in: returns the slot and clears the user+address failures. */
      succeeded(): void;
    }
  | { allowed: false; scope: RateLimitScope; retryAfterMs: Ms };

/** Key for an address: IPv4 as is (IPv4-mapped IPv6 unwrapped), IPv6 by its /64 prefix. */
export function addressBucket(address: string | null | undefined): string {
  if (typeof address !== "string" || address.length === 0) return "unknown";
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  const zoneless = address.split("%")[0]!;
  if (isIP(zoneless) !== 6) return address.slice(0, 64);
  const [head, tail = ""] = zoneless.toLowerCase().split("::") as [string, string?];
  const headParts = head === "" ? [] : head.split(":");
  const tailParts = tail === "" ? [] : tail.split(":");
  // An embedded IPv4 tail only affects the last 32 bits, never the /64 prefix we keep.
  const missing = 8 - headParts.length - tailParts.length;
  const groups = zoneless.includes("::") ? [...headParts, ...Array<string>(Math.max(0, missing)).fill("0"), ...tailParts] : headParts;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}

class SlidingWindow {
  private readonly hits = new Map<string, Ms[]>();
  constructor(
    readonly limit: WindowLimit,
    private readonly maxKeys: number,
  ) {}

  private live(key: string, now: Ms): Ms[] {
    const list = this.hits.get(key);
    if (!list) return [];
    const cutoff = now - this.limit.windowMs;
    let i = 0;
    while (i < list.length && list[i]! <= cutoff) i++;
    if (i > 0) list.splice(0, i);
    if (list.length === 0) this.hits.delete(key);
    return list;
  }

  /** ms until a slot frees up, or 0 when one is free now. */
  retryAfter(key: string, now: Ms): Ms {
    const list = this.live(key, now);
    if (list.length < this.limit.max) return 0;
    return list[list.length - this.limit.max]! + this.limit.windowMs - now;
  }

  add(key: string, at: Ms): void {
    let list = this.hits.get(key);
    if (!list) {
      if (this.hits.size >= this.maxKeys) this.evictOldest();
      list = [];
      this.hits.set(key, list);
    }
    list.push(at);
  }

  /** Remove one hit recorded at `at` (the slot a successful attempt took). */
  remove(key: string, at: Ms): void {
    const list = this.hits.get(key);
    if (!list) return;
    const i = list.lastIndexOf(at);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.hits.delete(key);
  }

  clear(key: string): void {
    this.hits.delete(key);
  }

  size(): number {
    return this.hits.size;
  }

  // Bounded memory under a flood of distinct keys: drop the key whose newest hit is oldest.
  private evictOldest(): void {
    let oldestKey: string | null = null;
    let oldest = Infinity;
    for (const [key, list] of this.hits) {
      const newest = list[list.length - 1] ?? -Infinity;
      if (newest < oldest) {
        oldest = newest;
        oldestKey = key;
      }
    }
    if (oldestKey !== null) this.hits.delete(oldestKey);
  }
}

export class LoginRateLimiter {
  readonly limits: Readonly<LoginRateLimits>;
  private readonly clock: Clock;
  private readonly userAddress: SlidingWindow;
  private readonly address: SlidingWindow;
  private readonly user: SlidingWindow | null;

  constructor(options: { limits?: Partial<LoginRateLimits>; clock?: Clock; maxKeys?: number } = {}) {
    this.limits = Object.freeze({ ...DEFAULT_LOGIN_RATE_LIMITS, ...options.limits });
    this.clock = options.clock ?? systemClock;
    const maxKeys = options.maxKeys ?? 50_000;
    this.userAddress = new SlidingWindow(this.limits.perUserAndAddress, maxKeys);
    this.address = new SlidingWindow(this.limits.perAddress, maxKeys);
    this.user = this.limits.perUser ? new SlidingWindow(this.limits.perUser, maxKeys) : null;
  }

  /**
   * Ask to try a password. Refused: nothing is counted. Allowed: the attempt counts as a failure
   * in every bucket until `succeeded()` is called.
   */
  attempt(username: string, address: string | null | undefined): LoginAttempt {
    const now = this.clock();
    const userKey = String(username).toLowerCase().slice(0, 256);
    const addrKey = addressBucket(address);
    const pairKey = `${userKey}\u0000${addrKey}`;
    const checks: [RateLimitScope, SlidingWindow | null, string][] = [
      ["user+address", this.userAddress, pairKey],
      ["address", this.address, addrKey],
      ["user", this.user, userKey],
    ];
    for (const [scope, window, key] of checks) {
      if (!window) continue;
      const wait = window.retryAfter(key, now);
      if (wait > 0) return { allowed: false, scope, retryAfterMs: wait };
    }
    for (const [, window, key] of checks) window?.add(key, now);
    let done = false;
    return {
      allowed: true,
      succeeded: () => {
        if (done) return;
        done = true;
        this.userAddress.clear(pairKey);
        this.address.remove(addrKey, now);
        this.user?.remove(userKey, now);
      },
    };
  }

  /** Number of keys tracked (for tests and metrics). */
  trackedKeys(): number {
    return this.userAddress.size() + this.address.size() + (this.user?.size() ?? 0);
  }
}
