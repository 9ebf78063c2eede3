/**
 * Works the outbox: for each channel its oldest pending message, claimed with a lease, sent
 * outside any transaction, then marked sent, or retried with exponential backoff (for hours:
 * `giveUpAfterMs`, default 24 h) and finally marked failed. At most `ratePerMinute` messages a
 * minute per channel. Nothing waits on it: the engine kicks it and goes on; a slow receiver
 * holds up only its own channel.
 */
import type { AlertWebhookPayload } from "../contract/alerts";
import type { LazyStore } from "../store/lazyStore";
import type { Channel, ChannelStore } from "./channels";
import { DeliveryError } from "./deliveryError";
import { claimHead, markFailed, markOrphaned, markSent, messagePayload, pendingHeads, sentInLastMinute, type OutboxRow } from "./outbox";
import { sendTo } from "./senders";
import type { DeliveryTimings } from "./timings";

export type SendFn = (channel: Channel, payload: AlertWebhookPayload, signal: AbortSignal) => Promise<void>;

/** Delay before attempt n+1 after n failed ones: base·2^(n−1), capped, ±10 % so replicas and channels spread out. */
export function backoffMs(failedAttempts: number, t: Pick<DeliveryTimings, "backoffBaseMs" | "backoffMaxMs">, random = Math.random): number {
  const raw = Math.min(t.backoffMaxMs, t.backoffBaseMs * 2 ** Math.max(0, failedAttempts - 1));
  return Math.round(raw * (0.9 + 0.2 * random()));
}

export class Deliverer {
  private readonly inFlight = new Set<string>();
  private readonly abort = new AbortController();
  private timer: ReturnType<typeof setInterval> | null = null;
  private running = false;
  private again = false;
  /** channels whose last attempt failed (logged once until they work again) */
  private readonly failing = new Set<string>();

  constructor(
    private readonly store: LazyStore,
    private readonly channels: ChannelStore,
    private readonly timings: DeliveryTimings,
    private readonly log: (msg: string) => void,
    private readonly send: SendFn = sendTo,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.kick(), this.timings.pollMs);
    this.timer.unref?.();
    this.kick();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.abort.abort();
  }

  /** Look at the outbox now (soon, if a look is under way). */
  kick(): void {
    if (this.abort.signal.aborted) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.claimDue()
      .catch((err: unknown) => this.log(`alert delivery: cannot read the outbox: ${(err as Error).message}`))
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Sends under way in this process (tests, shutdown). */
  busy(): boolean {
    return this.inFlight.size > 0 || this.running;
  }

  private async claimDue(): Promise<void> {
    const store = await this.store.get();
    const heads = await pendingHeads(store.db);
    if (heads.length === 0) return;
    const now = await store.nowMs();
    const channels = new Map((await this.channels.all()).map((c) => [c.id, c]));
    for (const { channel_id, head } of heads) {
      if (this.inFlight.has(channel_id) || this.abort.signal.aborted) continue;
      const channel = channels.get(channel_id) ?? (await this.channels.resolveDynamic(channel_id));
      if (!channel) {
        await markOrphaned(store.db, channel_id);
        continue;
      }
      if (!channel.enabled) continue;
      if ((await sentInLastMinute(store.db, channel_id, now)) >= this.timings.ratePerMinute) continue;
      const row = await claimHead(store.db, store.dialect, head, now, this.timings.leaseMs);
      if (!row) continue;
      this.inFlight.add(channel_id);
      void this.deliver(row, channel).finally(() => {
        this.inFlight.delete(channel_id);
        this.kick();
      });
    }
  }

  private async deliver(row: OutboxRow, channel: Channel): Promise<void> {
    const store = await this.store.get();
    const payload = await messagePayload(store.db, row.message_id);
    if (!payload) return markFailed(store.db, row.id, "the message is gone", null);
    try {
      await this.send(channel, payload, this.abort.signal);
    } catch (err) {
      if (this.abort.signal.aborted) {
        // shutting down: hand the row back so the next start (or another replica) sends it at once
        await markFailed(store.db, row.id, "interrupted: the panel stopped", row.last_attempt_at ?? 0).catch(() => undefined);
        return;
      }
      const why = err instanceof DeliveryError ? err.message : `unexpected error: ${(err as Error).message}`;
      const now = await store.nowMs();
      const giveUp = now - row.created_at >= this.timings.giveUpAfterMs;
      await markFailed(store.db, row.id, why, giveUp ? null : now + backoffMs(row.attempts, this.timings));
      if (giveUp) this.log(`alert channel ${channel.name}: gave up on message ${row.message_id} after ${row.attempts} attempts: ${why}`);
      else if (!this.failing.has(channel.id)) this.log(`alert channel ${channel.name}: delivery failed (${why}); retrying with backoff`);
      this.failing.add(channel.id);
      return;
    }
    await markSent(store.db, row.id, await store.nowMs());
    if (this.failing.delete(channel.id)) this.log(`alert channel ${channel.name}: delivering again`);
  }
}
