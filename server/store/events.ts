/**
 * Panel events: what people cause (an audit row, a session or account change, a host added),
 * for every replica. Written into `panel_events` in the same transaction as the change, with a
 * NOTIFY on PostgreSQL (payload: the id only); each replica's bus (./eventBus.ts) reads what is
 * new by id, so one that missed notifications (reconnecting) catches up and misses nothing.
 *
 * Ids must become visible in order, or a reader that saw 11 would skip a 10 committed later:
 * on PostgreSQL every writer takes one advisory lock before its insert, held to its commit (NOTIFY
 * serializes commits anyway; this is human rate, never telemetry). SQLite has one writer at a time.
 */
import { sql } from "kysely";
import type { Db, Dialect } from "./database";

export const NOTIFY_CHANNEL = "gpudeck_events";

/** What each kind carries (small: the id is what is notified, the body stays in the table). */
export interface PanelEventBodies {
  /** a session ended or an account changed: open streams of that user re-check now (userId null: everyone's) */
  sessions: { userId: number | null; username: string | null };
  /** a host was added, changed or removed on the Hosts page: every replica re-reads the hosts table */
  hosts: { name: string };
  /** an audit row was written */
  audit: { id: number; action: string; host: string | null; unit: string | null; user: string | null; outcome: string };
}

export type PanelEventKind = keyof PanelEventBodies;

export type PanelEvent = { [K in PanelEventKind]: { id: number; at: number; kind: K; body: PanelEventBodies[K] } }[PanelEventKind];

/** Whoever wants to know that something was written (the bus: it reads what is new). */
export interface EventNotifier {
  poke(): void;
}

export const NO_NOTIFIER: EventNotifier = { poke: () => undefined };

/** Write an event inside the caller's transaction `tx`; returns its id. */
export async function publishEvent<K extends PanelEventKind>(tx: Db, dialect: Dialect, kind: K, body: PanelEventBodies[K], at: number): Promise<number> {
  if (dialect === "postgres") await sql`select pg_advisory_xact_lock(hashtext(${NOTIFY_CHANNEL}))`.execute(tx);
  const { id } = await tx
    .insertInto("panel_events")
    .values({ at, kind, body: JSON.stringify(body) })
    .returning("id")
    .executeTakeFirstOrThrow();
  if (dialect === "postgres") await sql`select pg_notify(${NOTIFY_CHANNEL}, ${String(id)})`.execute(tx);
  return id;
}

const KINDS = new Set<string>(["sessions", "hosts", "audit"] satisfies PanelEventKind[]);

/** Rows after `afterId`, oldest first, at most `limit`; unknown kinds (a newer replica's) are skipped. */
export async function eventsAfter(db: Db, afterId: number, limit: number): Promise<{ events: PanelEvent[]; lastId: number; more: boolean }> {
  const rows = await db.selectFrom("panel_events").selectAll().where("id", ">", afterId).orderBy("id").limit(limit).execute();
  const events: PanelEvent[] = [];
  for (const r of rows) {
    if (!KINDS.has(r.kind)) continue;
    try {
      events.push({ id: r.id, at: r.at, kind: r.kind, body: JSON.parse(r.body) } as PanelEvent);
    } catch {
      // a body we cannot read is skipped, never a reason to stop reading
    }
  }
  return { events, lastId: rows.length ? rows[rows.length - 1]!.id : afterId, more: rows.length === limit };
}

export async function lastEventId(db: Db): Promise<number> {
  const r = await db
    .selectFrom("panel_events")
    .select((eb) => eb.fn.max("id").as("id"))
    .executeTakeFirst();
  return Number(r?.id ?? 0);
}

/** Housekeeping: events older than this are only history (replicas read them within seconds). */
export async function pruneEvents(db: Db, beforeMs: number): Promise<number> {
  const r = await db.deleteFrom("panel_events").where("at", "<", beforeMs).executeTakeFirst();
  return Number(r.numDeletedRows);
}
