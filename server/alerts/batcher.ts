/**
 * Grouping: alert starts (and ends) of one host and rule that happen within the grouping window
 * become one message ("host gpu-b: 6 units failed"), queued for every enabled channel that is no
 * escalation channel (routing.ts); the end of an alert that was escalated also goes to the
 * channels it was escalated to. A start acknowledged inside the window still goes out, saying who
 * acknowledged it and when (lifecycle.ts queues no separate message for it then). A group
 * goes out once its oldest notification is `windowMs` old and every alert in it has its
 * diagnosis (or `diagnosisWaitMs` more have passed). Claimed in a transaction: on PostgreSQL the
 * rows are locked with SKIP LOCKED, so two replicas never make two messages of one start.
 */
import type { AlertState, AlertView } from "../contract/alerts";
import type { Store } from "../store/database";
import { alertView } from "./alertStore";
import { buildPayload } from "./message";
import { enqueueMessage } from "./outbox";

export interface BatchOptions {
  windowMs: number;
  diagnosisWaitMs: number;
  panelUrl: string;
  /** the channels a new message goes to (enabled ones, escalation channels left out) */
  channelIds: () => Promise<string[]>;
  /** the channels an alert was escalated to: they also hear that it ended */
  escalatedChannelIds?: (alert: AlertView) => Promise<string[]>;
}

interface Pending {
  id: number;
  alert_id: number;
  state: AlertState;
  created_at: number;
  host: string;
  rule: string;
  diagnosis_state: string;
}

/** Queue the groups that are ready; returns how many messages were made. */
export async function batchNotifications(store: Store, opts: BatchOptions): Promise<number> {
  const now = await store.nowMs();
  const pending = (await store.db
    .selectFrom("alert_notifications as n")
    .innerJoin("alerts as a", "a.id", "n.alert_id")
    .select(["n.id", "n.alert_id", "n.state", "n.created_at", "a.host", "a.rule", "a.diagnosis_state"])
    .where("n.message_id", "is", null)
    .orderBy("n.id")
    .limit(2000)
    .execute()) as Pending[];
  const groups = new Map<string, Pending[]>();
  for (const p of pending) {
    const key = `${p.host}\u0000${p.rule}\u0000${p.state}`;
    groups.set(key, [...(groups.get(key) ?? []), p]);
  }
  let made = 0;
  let channelIds: string[] | null = null;
  for (const group of groups.values()) {
    const oldest = group[0]!.created_at;
    if (now - oldest < opts.windowMs) continue;
    const settled = group.every((p) => p.diagnosis_state !== "pending") || now - oldest >= opts.windowMs + opts.diagnosisWaitMs;
    if (!settled) continue;
    channelIds ??= await opts.channelIds();
    if (await queueGroup(store, group, now, opts, channelIds)) made++;
  }
  return made;
}

async function queueGroup(store: Store, group: Pending[], now: number, opts: BatchOptions, regular: string[]): Promise<boolean> {
  const state = group[0]!.state;
  return store.db.transaction().execute(async (trx) => {
    let claim = trx
      .selectFrom("alert_notifications")
      .select(["id", "alert_id"])
      .where(
        "id",
        "in",
        group.map((p) => p.id),
      )
      .where("message_id", "is", null);
    if (store.dialect === "postgres") claim = claim.forUpdate().skipLocked();
    const claimed = await claim.execute();
    if (claimed.length === 0) return false;
    let read = trx
      .selectFrom("alerts")
      .selectAll()
      .where(
        "id",
        "in",
        claimed.map((c) => c.alert_id),
      )
      .orderBy("unit");
    // PostgreSQL: an acknowledgement of one of them waits for this message, or this waits for it,
    // so the start says it was acknowledged or the acknowledgement finds where the start went
    // (SQLite: one write transaction at a time already)
    if (store.dialect === "postgres") read = read.forUpdate();
    const rows = await read.execute();
    const alerts = rows.map(alertView);
    const first = alerts[0]!;
    let channelIds = regular;
    if (state === "resolved" && opts.escalatedChannelIds) {
      const escalated = alerts.filter((a) => a.escalatedAt != null);
      const extra = (await Promise.all(escalated.map((a) => opts.escalatedChannelIds!(a)))).flat();
      channelIds = [...new Set([...regular, ...extra])];
    }
    const messageId = await enqueueMessage(
      trx,
      {
        kind: "alert",
        host: first.host,
        rule: first.rule,
        state,
        payload: (id) => buildPayload(alerts, state, id, opts.panelUrl),
      },
      channelIds,
      now,
    );
    await trx
      .updateTable("alert_notifications")
      .set({ message_id: messageId })
      .where(
        "id",
        "in",
        claimed.map((c) => c.id),
      )
      .execute();
    return true;
  });
}
