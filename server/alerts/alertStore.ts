/**
 * Alerts in the panel database, shared by every replica: at most one open alert per rule, host
 * and unit (a partial unique index; opening is INSERT … ON CONFLICT DO NOTHING, so two replicas
 * that both see a unit fail open one), and resolving is a conditional UPDATE only one replica
 * wins. Each start and end that should be told becomes a notification row in the same
 * transaction, which the batcher groups into messages. Times are the database's clock.
 */
import type { Kysely, Selectable } from "kysely";
import type { AlertDiagnosis, AlertRuleId, AlertSeverity, AlertView } from "../contract/alerts";
import type { Store } from "../store/database";
import type { AlertsTable } from "../store/alertTables";
import type { PanelSchema } from "../store/schema";
import type { Condition } from "./conditions";

export type AlertRow = Selectable<AlertsTable>;

export async function openAlertRows(db: Kysely<PanelSchema>): Promise<AlertRow[]> {
  return db.selectFrom("alerts").selectAll().where("resolved_at", "is", null).execute();
}

/** Open an alert for a condition; its id, or null when one is open already (this replica or another). */
export async function openAlert(store: Store, c: Condition, opts: { silenced: boolean; diagnose: boolean; maintenance?: boolean }): Promise<number | null> {
  // a maintenance window mutes like a silence (recorded, not sent; told if still open when it ends)
  const muted = opts.silenced || opts.maintenance === true;
  const now = await store.nowMs();
  return store.db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto("alerts")
      .values({
        rule: c.rule,
        host: c.host,
        unit: c.unit,
        severity: c.severity,
        summary: c.summary,
        since_at: c.sinceMs,
        opened_at: now,
        resolved_at: null,
        diagnosis: null,
        diagnosis_state: opts.diagnose ? "pending" : "none",
        diagnosis_error: null,
        silenced: opts.silenced ? 1 : 0,
        fire_queued: muted ? 0 : 1,
        in_maintenance: opts.maintenance ? 1 : 0,
      })
      .onConflict((oc) => oc.doNothing())
      .returning("id")
      .executeTakeFirst();
    if (!row) return null;
    if (!muted) await trx.insertInto("alert_notifications").values({ alert_id: row.id, state: "firing", created_at: now, message_id: null }).execute();
    return row.id;
  });
}

/** Resolve an open alert; false when another replica did first. Told only when its start was. */
export async function resolveAlert(store: Store, id: number): Promise<boolean> {
  const now = await store.nowMs();
  return store.db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable("alerts")
      .set({ resolved_at: now })
      .where("id", "=", id)
      .where("resolved_at", "is", null)
      .returning(["fire_queued"])
      .executeTakeFirst();
    if (!row) return false;
    if (row.fire_queued) await trx.insertInto("alert_notifications").values({ alert_id: id, state: "resolved", created_at: now, message_id: null }).execute();
    return true;
  });
}

/** A silence that muted an open alert ended: tell its start now (once, whichever replica gets here first). */
export async function releaseSilenced(store: Store, id: number): Promise<boolean> {
  const now = await store.nowMs();
  return store.db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable("alerts")
      .set({ fire_queued: 1 })
      .where("id", "=", id)
      .where("fire_queued", "=", 0)
      .where("resolved_at", "is", null)
      .returning("id")
      .executeTakeFirst();
    if (!row) return false;
    await trx.insertInto("alert_notifications").values({ alert_id: id, state: "firing", created_at: now, message_id: null }).execute();
    return true;
  });
}

export async function pendingDiagnoses(db: Kysely<PanelSchema>, limit = 50): Promise<AlertRow[]> {
  return db.selectFrom("alerts").selectAll().where("diagnosis_state", "=", "pending").orderBy("id").limit(limit).execute();
}

export async function setDiagnosis(db: Kysely<PanelSchema>, id: number, result: { diagnosis: AlertDiagnosis } | { unavailable: string }): Promise<void> {
  const values =
    "diagnosis" in result
      ? { diagnosis: JSON.stringify(result.diagnosis), diagnosis_state: "done" as const, diagnosis_error: null }
      : { diagnosis: null, diagnosis_state: "unavailable" as const, diagnosis_error: result.unavailable };
  await db.updateTable("alerts").set(values).where("id", "=", id).where("diagnosis_state", "=", "pending").execute();
}

export function alertView(row: AlertRow): AlertView {
  let diagnosis: AlertDiagnosis | null = null;
  if (row.diagnosis) {
    try {
      diagnosis = JSON.parse(row.diagnosis) as AlertDiagnosis;
    } catch {
      diagnosis = null;
    }
  }
  return {
    id: row.id,
    rule: row.rule as AlertRuleId,
    host: row.host,
    unit: row.unit === "" ? null : row.unit,
    severity: row.severity as AlertSeverity,
    summary: row.summary,
    sinceMs: row.since_at,
    openedAtMs: row.opened_at,
    resolvedAtMs: row.resolved_at,
    diagnosis,
    diagnosisUnavailable: row.diagnosis_state === "unavailable" ? row.diagnosis_error : row.diagnosis_state === "pending" ? "asking the agent…" : null,
    silenced: row.silenced === 1,
    acknowledgedBy: row.acknowledged_by ?? null,
    acknowledgedAt: row.acknowledged_at ?? null,
    ackNote: row.ack_note ?? null,
    escalatedAt: row.escalated_at ?? null,
    inMaintenance: row.in_maintenance === 1,
  };
}

export interface AlertFilter {
  state: "open" | "resolved" | "all";
  host?: string;
  unit?: string;
  cursor?: number | null;
  limit: number;
}

/** Newest first, keyset-paged by id. */
export async function listAlerts(db: Kysely<PanelSchema>, f: AlertFilter): Promise<{ alerts: AlertView[]; nextCursor: number | null }> {
  let q = db.selectFrom("alerts").selectAll();
  if (f.state === "open") q = q.where("resolved_at", "is", null);
  if (f.state === "resolved") q = q.where("resolved_at", "is not", null);
  if (f.host) q = q.where("host", "=", f.host);
  if (f.unit) q = q.where("unit", "=", f.unit);
  if (f.cursor) q = q.where("id", "<", f.cursor);
  const rows = await q
    .orderBy("id", "desc")
    .limit(f.limit + 1)
    .execute();
  const page = rows.slice(0, f.limit);
  return { alerts: page.map(alertView), nextCursor: rows.length > f.limit ? page[page.length - 1]!.id : null };
}

/** Alerts of these units that overlap [sinceMs, now], newest first: the status page's incidents. */
export async function unitAlertsSince(db: Kysely<PanelSchema>, units: { host: string; unit: string }[], sinceMs: number, limit = 2000): Promise<AlertRow[]> {
  if (units.length === 0) return [];
  // by host in SQL, by unit here: an OR per unit would grow the statement with the fleet
  const wanted = new Set(units.map((u) => `${u.host}\u0000${u.unit}`));
  const rows = await db
    .selectFrom("alerts")
    .selectAll()
    .where("host", "in", [...new Set(units.map((u) => u.host))])
    .where("unit", "!=", "")
    .where((eb) => eb.or([eb("resolved_at", "is", null), eb("resolved_at", ">=", sinceMs)]))
    .orderBy("since_at", "desc")
    .limit(limit)
    .execute();
  return rows.filter((r) => wanted.has(`${r.host}\u0000${r.unit}`));
}
