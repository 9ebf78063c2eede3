/**
 * One dedicated PostgreSQL connection per replica that LISTENs for panel events (a pooled
 * connection cannot: LISTEN belongs to its session, and PgBouncer's transaction pooling would
 * drop it). NOTIFY has no replay, so after every (re)connect the owner catches up by id
 * (`onListening`). A connection that dies without a word (a partitioned network) is found by a
 * ping every `pingMs`; reconnects back off from 0.5 s to 10 s.
 */
import type pg from "pg";
import { redactSecrets } from "./unavailable";

export interface ListenStatus {
  ok: boolean;
  /** since when it has been as it is (ms) */
  since: number;
  error: string | null;
}

export interface PgListenerOptions {
  newClient: () => pg.Client;
  channel: string;
  onNotify: () => void;
  /** listening again (first time or after a reconnect): read what was missed */
  onListening: () => void;
  log?: (msg: string) => void;
  pingMs?: number;
  clock?: () => number;
}

const BACKOFF_MS = [500, 1000, 2000, 5000, 10_000];

export class PgListener {
  private client: pg.Client | null = null;
  private state: ListenStatus;
  private stopped = false;
  private failures = 0;
  private retry: ReturnType<typeof setTimeout> | null = null;
  private ping: ReturnType<typeof setInterval> | null = null;
  private readonly clock: () => number;

  constructor(private readonly o: PgListenerOptions) {
    this.clock = o.clock ?? Date.now;
    this.state = { ok: false, since: this.clock(), error: "not connected yet" };
  }

  status(): ListenStatus {
    return { ...this.state };
  }

  start(): void {
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = this.o.newClient();
    this.client = client;
    let lost = false;
    const onLoss = (err?: Error) => {
      if (lost || this.client !== client) return;
      lost = true;
      this.lose(client, err?.message ?? "the connection ended");
    };
    client.on("error", onLoss);
    client.on("end", () => onLoss());
    client.on("notification", (n) => {
      if (n.channel === this.o.channel) this.o.onNotify();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.o.channel}`);
    } catch (err) {
      onLoss(err as Error);
      return;
    }
    if (lost || this.stopped) return;
    if (this.failures > 0) this.o.log?.("listening for panel events again");
    this.failures = 0;
    this.state = { ok: true, since: this.clock(), error: null };
    this.ping = setInterval(() => {
      client.query("select 1").catch((err: Error) => onLoss(err));
    }, this.o.pingMs ?? 15_000);
    this.ping.unref();
    this.o.onListening();
  }

  private lose(client: pg.Client, why: string): void {
    if (this.ping) clearInterval(this.ping);
    this.ping = null;
    this.client = null;
    client.end().catch(() => undefined);
    if (this.stopped) return;
    const error = redactSecrets(why).slice(0, 300);
    if (this.state.ok || this.failures === 0) this.o.log?.(`the LISTEN connection for panel events is down (${error}); reconnecting`);
    // `since` is when it went down, not the latest failed retry
    this.state = this.state.ok ? { ok: false, since: this.clock(), error } : { ...this.state, error };
    const wait = BACKOFF_MS[Math.min(this.failures, BACKOFF_MS.length - 1)]!;
    this.failures++;
    this.retry = setTimeout(() => void this.connect(), wait);
    this.retry.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    if (this.ping) clearInterval(this.ping);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
