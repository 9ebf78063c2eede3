/**
 * Requests per API token per minute (GPUDECK_TOKEN_REQUESTS_PER_MINUTE, default 600), counted in
 * the panel database like sign-in failures (./rateLimit.ts), so every replica counts together and
 * a script cannot multiply its allowance by the number of replicas.
 */
import { RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { Store } from "../store/database";
import type { StoreSource } from "../store/lazyStore";
import { runLimiter, sharedLimiter } from "./rateLimit";
import type { Ms } from "./types";

export const DEFAULT_TOKEN_REQUESTS_PER_MINUTE = 600;

export class TokenRateLimiter {
  private limiter: { store: Store; limiter: RateLimiterAbstract } | null = null;

  constructor(
    private readonly source: StoreSource,
    readonly perMinute = DEFAULT_TOKEN_REQUESTS_PER_MINUTE,
  ) {}

  /** Count one request of the token whose hash is `tokenHash`; refused: how long to wait. */
  async take(tokenHash: string): Promise<{ allowed: true } | { allowed: false; retryAfterMs: Ms }> {
    const store = await this.source.get();
    if (this.limiter?.store !== store) this.limiter = { store, limiter: sharedLimiter(store, "token", { max: this.perMinute, windowMs: 60_000 }) };
    const { limiter } = this.limiter;
    try {
      await runLimiter(store, () => limiter.consume(tokenHash.slice(0, 32), 1));
      return { allowed: true };
    } catch (err) {
      if (err instanceof RateLimiterRes) return { allowed: false, retryAfterMs: Math.max(1, err.msBeforeNext) };
      throw err;
    }
  }
}
