/**
 * Each replica's reader of panel events (./events.ts): it hands every new row, once and in id
 * order, to its subscribers. It reads what is new (`WHERE id > last`) when told: by a NOTIFY on
 * its LISTEN connection (PostgreSQL), at once after a write in this process (`poke`, both
 * databases: the in-process emitter of SQLite mode), after every reconnect, and every `pollMs`
 * regardless (SQLite: what `npm run user` wrote from another process; PostgreSQL: a safety net).
 * It starts at the newest id: events are for what happens from now on, history is in the tables.
 */
import { eventsAfter, lastEventId, NOTIFY_CHANNEL, type EventNotifier, type PanelEvent } from "./events";
import type { StoreSource } from "./lazyStore";
import { PgListener, type ListenStatus } from "./pgListener";

export interface EventBusOptions {
  /** Default 1000 ms on SQLite, 5000 ms on PostgreSQL. */
  pollMs?: number;
  log?: (msg: string) => void;
  clock?: () => number;
  /** PostgreSQL: ping the LISTEN connection this often. Default 15 s. */
  listenPingMs?: number;
}

const PAGE = 500;

export class PanelEventBus implements EventNotifier {
  private readonly subscribers = new Set<(e: PanelEvent) => void>();
  private last: number | null = null;
  private reading: Promise<void> | null = null;
  private again = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private listener: PgListener | null = null;
  private started = false;
  private stopped = false;
  private readonly clock: () => number;
  private readonly startedAt: number;

  constructor(
    private readonly source: StoreSource,
    private readonly o: EventBusOptions = {},
  ) {
    this.clock = o.clock ?? Date.now;
    this.startedAt = this.clock();
  }

  /** Every event from now on; returns the unsubscribe. */
  subscribe(fn: (e: PanelEvent) => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  /** The newest id delivered (null before the first read). */
  get lastId(): number | null {
    return this.last;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    const pollMs = this.o.pollMs ?? (this.source.dialect === "postgres" ? 5000 : 1000);
    this.timer = setInterval(() => this.poke(), pollMs);
    this.timer.unref();
    if (this.source.dialect === "postgres") void this.listen();
    this.poke();
  }

  private async listen(): Promise<void> {
    // the first open may fail (database down at start): the poll keeps trying, and so does this
    for (;;) {
      if (this.stopped) return;
      const store = await this.source.get().catch(() => null);
      if (store?.newPgClient) {
        this.listener = new PgListener({
          newClient: store.newPgClient,
          channel: NOTIFY_CHANNEL,
          onNotify: () => this.poke(),
          onListening: () => this.poke(),
          log: this.o.log,
          pingMs: this.o.listenPingMs,
          clock: this.clock,
        });
        this.listener.start();
        return;
      }
      await new Promise((r) => setTimeout(r, 1000).unref());
    }
  }

  /** Something may have been written: read what is new (coalesced: one read at a time, one more after it). */
  poke(): void {
    if (this.stopped || !this.started) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = this.read().finally(() => {
      this.reading = null;
      if (this.again) {
        this.again = false;
        this.poke();
      }
    });
  }

  /** Resolves when what is in the table now has been delivered (tests, shutdown). */
  async settled(): Promise<void> {
    this.poke();
    while (this.reading) await this.reading;
  }

  private async read(): Promise<void> {
    try {
      const { db } = await this.source.get();
      if (this.last === null) {
        this.last = await lastEventId(db);
        return;
      }
      for (;;) {
        const { events, lastId, more } = await eventsAfter(db, this.last, PAGE);
        this.last = lastId;
        for (const e of events) this.deliver(e);
        if (!more) break;
      }
    } catch {
      // the database is away: the next poke or poll tries again from the same id
    }
  }

  private deliver(e: PanelEvent): void {
    for (const fn of [...this.subscribers]) {
      try {
        fn(e);
      } catch (err) {
        this.o.log?.(`a panel event handler failed: ${(err as Error).message}`);
      }
    }
  }

  /** For /healthz: the LISTEN connection (PostgreSQL), or the in-process emitter (SQLite: always up). */
  listenStatus(): ListenStatus & { mode: "listen" | "in-process" } {
    if (this.source.dialect !== "postgres") return { ok: true, since: this.startedAt, error: null, mode: "in-process" };
    const s = this.listener?.status() ?? { ok: false, since: this.startedAt, error: "not connected yet" };
    return { ...s, mode: "listen" };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.listener?.stop();
    await this.reading;
  }
}
