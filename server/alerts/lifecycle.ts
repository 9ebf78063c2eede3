/**
 * What happens to an open alert after it was told: someone acknowledges it ("I'm on it", with a
 * note), or nobody does and it escalates. Both are one conditional UPDATE … RETURNING on the
 * alert's row and the message for it in the same transaction, so whichever replica wins sends
 * it, once; the outbox (lease, retries, order per channel) delivers it like any other message.
 *
 * The ack message goes to the channels the alert's start went to ("alice acknowledged it: …"),
 * and to those it was escalated to; acknowledged before its start was sent (inside the grouping
 * window), there is no ack message: the start goes out and says "Already acknowledged by …";
 * the escalation to the rule's `escalateTo` channels ("not acknowledged after 10 min").
 * An acknowledged alert never escalates; a resolved one neither. Nothing repeats.
 */
import type { Transaction } from "kysely";
import type { AlertView, AlertWebhookPayload } from "../contract/alerts";
import { formatDurationWords } from "../contract/format";
import type { Store } from "../store/database";
import type { PanelSchema } from "../store/schema";
import { alertView, type AlertRow } from "./alertStore";
import { buildPayload } from "./message";
import { enqueueMessage } from "./outbox";

export class AckError extends Error {
  constructor(
    message: string,
    readonly code: "NOT_FOUND" | "CONFLICT",
  ) {
    super(message);
  }
}

/** The channels an alert's start message was queued for (in the order they were); none while its start waits in the grouping window. */
async function firingChannels(trx: Transaction<PanelSchema>, alertId: number): Promise<string[]> {
  const rows = await trx
    .selectFrom("alert_notifications as n")
    .innerJoin("alert_outbox as o", "o.message_id", "n.message_id")
    .select("o.channel_id")
    .where("n.alert_id", "=", alertId)
    .where("n.state", "=", "firing")
    .orderBy("o.id")
    .execute();
  return [...new Set(rows.map((r) => r.channel_id))];
}

export function ackPayload(a: AlertView, messageId: number, panelUrl: string): AlertWebhookPayload {
  const base = buildPayload([a], "firing", messageId, panelUrl);
  const said = `${a.acknowledgedBy} acknowledged it${a.ackNote ? `: ${a.ackNote}` : "."}`;
  return {
    ...base,
    kind: "acknowledged",
    title: `Acknowledged: ${base.title}`,
    summary: said,
    acknowledgedBy: a.acknowledgedBy ?? "",
    ackNote: a.ackNote,
    alerts: base.alerts.map((i) => ({ ...i, summary: said })),
  };
}

export function escalationPayload(a: AlertView, afterMs: number, messageId: number, panelUrl: string): AlertWebhookPayload {
  const base = buildPayload([a], "firing", messageId, panelUrl);
  const said = `Not acknowledged after ${formatDurationWords(afterMs)}: ${a.summary}`;
  return { ...base, kind: "escalation", title: `Not acknowledged: ${base.title}`, summary: said, alerts: base.alerts.map((i) => ({ ...i, summary: said })) };
}

/**
 * Acknowledge an open alert. The first acknowledgement wins (a second is a CONFLICT that names
 * who was first); a resolved alert cannot be. Returns the view and the message id (null when the
 * start was not told yet: still in its grouping window, where the start itself will say who
 * acknowledged it and when (batcher.ts), or silenced or in maintenance, where it says so if it
 * is told once they end).
 */
export async function ackAlert(
  store: Store,
  id: number,
  by: string,
  note: string | null,
  panelUrl: string,
  /**
   * the channels an escalated alert was escalated to (they heard of it, so they hear who took
   * it): asked in the transaction, of the row the UPDATE returned, only when it was escalated
   */
  escalationChannels: (alert: AlertView) => readonly string[] = () => [],
): Promise<{ alert: AlertView; messageId: number | null }> {
  const now = await store.nowMs();
  return store.db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable("alerts")
      .set({ acknowledged_by: by, acknowledged_at: now, ack_note: note })
      .where("id", "=", id)
      .where("resolved_at", "is", null)
      .where("acknowledged_at", "is", null)
      .returningAll()
      .executeTakeFirst();
    if (!row) {
      const now2 = await trx.selectFrom("alerts").selectAll().where("id", "=", id).executeTakeFirst();
      if (!now2) throw new AckError(`There is no alert ${id}.`, "NOT_FOUND");
      if (now2.resolved_at !== null) throw new AckError(`Alert ${id} is resolved already; there is nothing to acknowledge.`, "CONFLICT");
      throw new AckError(`Alert ${id} was acknowledged already by ${now2.acknowledged_by}.`, "CONFLICT");
    }
    const alert = alertView(row);
    // read after the UPDATE: on PostgreSQL the batcher's claim of its start (which locks this
    // row) is then either committed and seen here, or sees the acknowledgement and says it
    const escalatedTo = alert.escalatedAt != null ? escalationChannels(alert) : [];
    const channels = [...new Set([...(await firingChannels(trx, id)), ...escalatedTo])];
    if (channels.length === 0) return { alert, messageId: null };
    const messageId = await enqueueMessage(
      trx,
      { kind: "alert", host: alert.host, rule: alert.rule, state: "acknowledged", payload: (mid) => ackPayload(alert, mid, panelUrl) },
      channels,
      now,
    );
    return { alert, messageId };
  });
}

export interface EscalationSetting {
  escalateAfterMs: number | null;
  escalateTo: string[];
}

/** When an open alert is due to escalate (epoch ms, the database's clock); null: never (acknowledged, escalated, muted, or the rule says nothing). */
export function escalationDueAt(row: AlertRow, setting: EscalationSetting | null): number | null {
  if (!setting || setting.escalateAfterMs === null || setting.escalateTo.length === 0) return null;
  if (row.resolved_at !== null || row.acknowledged_at !== null || row.escalated_at !== null) return null;
  // a silenced or maintenance-muted alert was not told: nobody failed to acknowledge it
  if (row.fire_queued !== 1) return null;
  return row.opened_at + setting.escalateAfterMs;
}

/**
 * Escalate one alert, once for every replica together: the UPDATE that sets escalated_at is the
 * claim. `channelIds` are the escalateTo channels that exist and are enabled; with none, it is
 * still marked (and the engine logs it), so it is not tried on every pass.
 */
export async function escalateAlert(
  store: Store,
  id: number,
  afterMs: number,
  channelIds: readonly string[],
  panelUrl: string,
): Promise<{ alert: AlertView; messageId: number | null } | null> {
  const now = await store.nowMs();
  return store.db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable("alerts")
      .set({ escalated_at: now })
      .where("id", "=", id)
      .where("resolved_at", "is", null)
      .where("acknowledged_at", "is", null)
      .where("escalated_at", "is", null)
      .returningAll()
      .executeTakeFirst();
    if (!row) return null;
    const alert = alertView(row);
    if (channelIds.length === 0) return { alert, messageId: null };
    const messageId = await enqueueMessage(
      trx,
      { kind: "alert", host: alert.host, rule: alert.rule, state: "escalation", payload: (mid) => escalationPayload(alert, afterMs, mid, panelUrl) },
      channelIds,
      now,
    );
    return { alert, messageId };
  });
}
