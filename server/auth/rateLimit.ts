/**
 * Login rate limiting, in the panel database so every replica counts together: five failures
 * alternating between two replicas trip the limit at five. rate-limiter-flexible does the
 * counting (its SQLite store on the better-sqlite3 handle under Kysely, lent while Kysely's one
 * connection is held; its PostgreSQL store on Kysely's pool), in its table `login_limits`
 * (migration 003). Each bucket is a fixed window that starts at its first failure (not a sliding
 * one: the store keeps a count and an expiry per key). Times are this machine's clock (the
 * library's; NTP-synchronised replicas agree to well under a window). Three buckets:
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
import { RateLimiterPostgres, RateLimiterRes, RateLimiterSQLite, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { Store } from "../store/database";
import type { StoreSource } from "../store/lazyStore";
import { LOGIN_LIMITS_TABLE } from "../store/migrations/003_replicas";
import { sha256Hex } from "./crypto";
import type { Ms } from "./types";

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
      succeeded(): Promise<void>;
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

/**
 * A rate-limiter-flexible limiter counting in the panel database (table `login_limits`, keys under
 * `prefix`), so every replica counts together. On SQLite, call it inside `runLimiter()`.
 */
export function sharedLimiter(store: Store, prefix: string, limit: WindowLimit): RateLimiterAbstract {
  // the table is the migration's; expired rows are pruned with the panel's housekeeping
  const common = { tableName: LOGIN_LIMITS_TABLE, tableCreated: true, clearExpiredByTimeout: false, keyPrefix: prefix };
  const window = { points: limit.max, duration: limit.windowMs / 1000 };
  if (store.pgPool) return new RateLimiterPostgres({ ...common, ...window, storeClient: store.pgPool, storeType: "pool" });
  // used only inside runLimiter(), while Kysely's connection is held
  return new RateLimiterSQLite({ ...common, ...window, storeClient: store.sqliteHandle, storeType: "better-sqlite3" });
}

/** Run a limiter call; on SQLite while the handle is lent (no Kysely transaction open meanwhile). */
export function runLimiter<T>(store: Store, fn: () => Promise<T>): Promise<T> {
  return store.withSqliteHandle ? store.withSqliteHandle(fn) : fn();
}

interface Bucket {
  scope: RateLimitScope;
  limiter: RateLimiterAbstract;
  key: string;
}

/** The three buckets' limiters on one store, made once per open store. */
interface Limiters {
  store: Store;
  userAddress: RateLimiterAbstract;
  address: RateLimiterAbstract;
  user: RateLimiterAbstract | null;
}

export class LoginRateLimiter {
  readonly limits: Readonly<LoginRateLimits>;
  private limiters: Limiters | null = null;

  constructor(
    private readonly source: StoreSource,
    options: { limits?: Partial<LoginRateLimits> } = {},
  ) {
    this.limits = Object.freeze({ ...DEFAULT_LOGIN_RATE_LIMITS, ...options.limits });
  }

  private async open(): Promise<Limiters> {
    const store = await this.source.get();
    if (this.limiters?.store === store) return this.limiters;
    const make = (prefix: string, limit: WindowLimit) => sharedLimiter(store, prefix, limit);
    const limiters: Limiters = {
      store,
      userAddress: make("login-ua", this.limits.perUserAndAddress),
      address: make("login-a", this.limits.perAddress),
      user: this.limits.perUser ? make("login-u", this.limits.perUser) : null,
    };
    this.limiters = limiters;
    return limiters;
  }

  private run<T>(store: Store, fn: () => Promise<T>): Promise<T> {
    return runLimiter(store, fn);
  }

  /**
   * Ask to try a password. Refused: nothing is counted. Allowed: the attempt counts as a failure
   * in every bucket until `succeeded()` is called.
   */
  async attempt(username: string, address: string | null | undefined): Promise<LoginAttempt> {
    const l = await this.open();
    // keys are bounded and plain whatever was typed as a name (PostgreSQL's key is varchar(255), no NUL)
    const userKey = sha256Hex(String(username).toLowerCase().slice(0, 256)).slice(0, 32);
    const addrKey = addressBucket(address);
    const buckets: Bucket[] = [
      { scope: "user+address", limiter: l.userAddress, key: `${userKey}/${addrKey}` },
      { scope: "address", limiter: l.address, key: addrKey },
      ...(l.user ? [{ scope: "user" as const, limiter: l.user, key: userKey }] : []),
    ];
    const taken: Bucket[] = [];
    for (const b of buckets) {
      try {
        await this.run(l.store, () => b.limiter.consume(b.key, 1));
        taken.push(b);
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) {
          await this.giveBack(l.store, taken);
          throw err;
        }
        // over the limit: this attempt counts nowhere (nor does it extend the block)
        await this.giveBack(l.store, [...taken, b]);
        return { allowed: false, scope: b.scope, retryAfterMs: Math.max(1, err.msBeforeNext) };
      }
    }
    let done = false;
    return {
      allowed: true,
      succeeded: async () => {
        if (done) return;
        done = true;
        const [pair, ...rest] = buckets;
        await this.run(l.store, () => pair!.limiter.delete(pair!.key));
        await this.giveBack(l.store, rest);
      },
    };
  }

  private async giveBack(store: Store, buckets: readonly Bucket[]): Promise<void> {
    for (const b of buckets) await this.run(store, () => b.limiter.reward(b.key, 1));
  }

  /** Housekeeping: rows whose window ended before `beforeMs`. */
  async pruneExpired(beforeMs: Ms = Date.now()): Promise<number> {
    const { db } = await this.source.get();
    const r = await db.deleteFrom("login_limits").where("expire", "<", beforeMs).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
