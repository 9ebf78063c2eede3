/**
 * Expensive queries (a journal page, a diagnosis, a crash-loop report, a timeline, GPU history:
 * each a journalctl on the GPU host or megabytes of JSON) are rate-limited per user:
 * GPUDECK_QUERIES_PER_MINUTE (120) a minute, counted by rate-limiter-flexible in this process
 * (each replica counts its own: the cap is on the load one replica takes). Over it: TOO_MANY_REQUESTS
 * with a sentence and Retry-After.
 */
import { TRPCError } from "@trpc/server";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";

export class QueryRateLimiter {
  private readonly limiter: RateLimiterMemory;
  constructor(readonly perMinute = 120) {
    this.limiter = new RateLimiterMemory({ points: perMinute, duration: 60 });
  }

  /** Take one of `user`'s queries this minute, or throw TOO_MANY_REQUESTS (setting Retry-After on `resHeaders`). */
  async take(user: string, resHeaders?: Headers): Promise<void> {
    try {
      await this.limiter.consume(user.toLowerCase().slice(0, 128));
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      const seconds = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      resHeaders?.set("Retry-After", String(seconds));
      throw new TRPCError({
        code: "TOO_MANY_REQUESTS",
        message: `You have made ${this.perMinute} expensive queries (journal, diagnosis, history) in the last minute, this panel's limit (GPUDECK_QUERIES_PER_MINUTE); try again in ${seconds} s.`,
      });
    }
  }
}
