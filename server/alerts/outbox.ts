/**
 * The persisted outbox: one row per message and channel, in the panel database, so nothing is
 * lost across a restart and a receiver that is down gets its messages when it is back, in order.
 * Each channel is sent its oldest pending message first (a later one waits behind it). A replica
 * claims a row with a lease: a conditional UPDATE … RETURNING (on PostgreSQL over
 * `FOR UPDATE SKIP LOCKED`, so replicas never wait on each other), and a replica that dies
 * mid-send leaves a lease that runs out and the row is tried again. Times are the database's.
 */
import type { Kysely, Selectable } from "kysely";
import type { AlertWebhookPayload, DeliveryView } from "../contract/alerts";
import type { Dialect } from "../store/database";
import type { AlertOutboxTable } from "../store/alertTables";
import type { PanelSchema } from "../store/schema";

export type OutboxRow = Selectable<AlertOutboxTable>;

type Db = Kysely<PanelSchema>;

/** A message and its rows for every channel, in one transaction; the message's id. */
export async function enqueueMessage(
  db: Db,
  m: { kind: "alert" | "test"; host: string | null; rule: string | null; state: string; payload: (id: number) => AlertWebhookPayload },
  channelIds: readonly string[],
  nowMs: number,
): Promise<number> {
  const { id } = await db
    .insertInto("alert_messages")
    .values({ kind: m.kind, host: m.host, rule: m.rule, state: m.state, title: "", payload: "{}", created_at: nowMs })
    .returning("id")
    .executeTakeFirstOrThrow();
  // the payload carries its own id (receivers de-duplicate on it)
  const payload = m.payload(id);
  await db
    .updateTable("alert_messages")
    .set({ title: payload.title, payload: JSON.stringify(payload) })
    .where("id", "=", id)
    .execute();
  if (channelIds.length) {
    await db
      .insertInto("alert_outbox")
      .values(
        channelIds.map((channel_id) => ({ message_id: id, channel_id, status: "pending" as const, attempts: 0, created_at: nowMs, next_attempt_at: nowMs })),
      )
      .execute();
  }
  return id;
}

/** Channels with something pending, and the id of the oldest pending row of each. */
export async function pendingHeads(db: Db): Promise<{ channel_id: string; head: number }[]> {
  return db
    .selectFrom("alert_outbox")
    .select(["channel_id", (eb) => eb.fn.min("id").as("head")])
    .where("status", "=", "pending")
    .groupBy("channel_id")
    .execute() as Promise<{ channel_id: string; head: number }[]>;
}

/** Claim a channel's oldest pending row if it is due and no one holds it; null otherwise. */
export async function claimHead(db: Db, dialect: Dialect, head: number, nowMs: number, leaseMs: number): Promise<OutboxRow | null> {
  const row = await db
    .updateTable("alert_outbox")
    .set((eb) => ({ lease_until: nowMs + leaseMs, attempts: eb("attempts", "+", 1), last_attempt_at: nowMs }))
    .where("id", "in", (eb) => {
      let q = eb
        .selectFrom("alert_outbox")
        .select("id")
        .where("id", "=", head)
        .where("status", "=", "pending")
        .where("next_attempt_at", "<=", nowMs)
        .where((w) => w.or([w("lease_until", "is", null), w("lease_until", "<", nowMs)]));
      if (dialect === "postgres") q = q.forUpdate().skipLocked();
      return q;
    })
    .returningAll()
    .executeTakeFirst();
  return row ?? null;
}

export async function markSent(db: Db, id: number, nowMs: number): Promise<void> {
  await db.updateTable("alert_outbox").set({ status: "sent", sent_at: nowMs, lease_until: null, last_error: null }).where("id", "=", id).execute();
}

/** A failed attempt: try again at `retryAtMs`, or give up (null). */
export async function markFailed(db: Db, id: number, error: string, retryAtMs: number | null): Promise<void> {
  await db
    .updateTable("alert_outbox")
    .set(retryAtMs === null ? { status: "failed", lease_until: null, last_error: error } : { next_attempt_at: retryAtMs, lease_until: null, last_error: error })
    .where("id", "=", id)
    .execute();
}

/** A row whose channel no longer exists (removed, or dropped from the environment). */
export async function markOrphaned(db: Db, channelId: string): Promise<void> {
  await db
    .updateTable("alert_outbox")
    .set({ status: "failed", lease_until: null, last_error: "the channel no longer exists" })
    .where("channel_id", "=", channelId)
    .where("status", "=", "pending")
    .execute();
}

export async function sentInLastMinute(db: Db, channelId: string, nowMs: number): Promise<number> {
  const r = await db
    .selectFrom("alert_outbox")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("channel_id", "=", channelId)
    .where("status", "=", "sent")
    .where("sent_at", ">", nowMs - 60_000)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

export async function messagePayload(db: Db, messageId: number): Promise<AlertWebhookPayload | null> {
  const r = await db.selectFrom("alert_messages").select("payload").where("id", "=", messageId).executeTakeFirst();
  return r ? (JSON.parse(r.payload) as AlertWebhookPayload) : null;
}

/** The delivery log, newest first, keyset-paged by id. */
export async function listDeliveries(
  db: Db,
  f: { channelId?: string; cursor?: number | null; limit: number },
): Promise<{ deliveries: DeliveryView[]; nextCursor: number | null }> {
  let q = db
    .selectFrom("alert_outbox as o")
    .innerJoin("alert_messages as m", "m.id", "o.message_id")
    .select([
      "o.id",
      "o.channel_id",
      "o.message_id",
      "m.title",
      "m.kind",
      "o.status",
      "o.attempts",
      "o.created_at",
      "o.last_attempt_at",
      "o.next_attempt_at",
      "o.sent_at",
      "o.last_error",
    ]);
  if (f.channelId) q = q.where("o.channel_id", "=", f.channelId);
  if (f.cursor) q = q.where("o.id", "<", f.cursor);
  const rows = await q
    .orderBy("o.id", "desc")
    .limit(f.limit + 1)
    .execute();
  const page = rows.slice(0, f.limit);
  return {
    deliveries: page.map((r) => ({
      id: r.id,
      channelId: r.channel_id,
      messageId: r.message_id,
      title: r.title,
      kind: r.kind,
      status: r.status,
      attempts: r.attempts,
      createdAtMs: r.created_at,
      lastAttemptAtMs: r.last_attempt_at,
      nextAttemptAtMs: r.status === "pending" ? r.next_attempt_at : null,
      sentAtMs: r.sent_at,
      lastError: r.last_error,
    })),
    nextCursor: rows.length > f.limit ? page[page.length - 1]!.id : null,
  };
}

/** Each channel's last attempt, for the channel list. */
export async function lastAttempts(db: Db): Promise<Map<string, { atMs: number; ok: boolean; error: string | null }>> {
  const rows = await db
    .selectFrom("alert_outbox")
    .select(["channel_id", "status", "last_attempt_at", "last_error"])
    .where("id", "in", (eb) =>
      eb
        .selectFrom("alert_outbox")
        .select((s) => s.fn.max("id").as("id"))
        .where("last_attempt_at", "is not", null)
        .groupBy("channel_id"),
    )
    .execute();
  return new Map(rows.map((r) => [r.channel_id, { atMs: r.last_attempt_at ?? 0, ok: r.status === "sent", error: r.status === "sent" ? null : r.last_error }]));
}
