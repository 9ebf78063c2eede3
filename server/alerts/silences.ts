/**
 * Silences: "mute gpu-a's vllm-kimi-k25.service for 2 h, because we are reloading its weights",
 * with who and why. A silence stops messages, not alerts: a muted alert still opens and shows
 * on the Alerts page (marked silenced), and is told when the silence ends while it is open.
 */
import type { Kysely, Selectable } from "kysely";
import type { AddSilenceInput, AlertRuleId, SilenceView } from "../contract/alerts";
import { globToRegExp } from "../contract/unitNames";
import type { AlertSilencesTable } from "../store/alertTables";
import type { PanelSchema } from "../store/schema";

type SilenceRow = Selectable<AlertSilencesTable>;

export interface ActiveSilence {
  id: number;
  host: RegExp;
  unit: RegExp | null;
  rule: string | null;
}

export async function addSilence(db: Kysely<PanelSchema>, input: AddSilenceInput, by: string, nowMs: number): Promise<SilenceView> {
  const row = await db
    .insertInto("alert_silences")
    .values({
      host_pattern: input.host,
      unit_pattern: input.unit ?? null,
      rule: input.rule ?? null,
      reason: input.reason,
      created_by: by,
      created_at: nowMs,
      ends_at: nowMs + input.minutes * 60_000,
      ended_at: null,
      ended_by: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return silenceView(row, nowMs);
}

/** End a silence early; null when there is none of that id that is still on. */
export async function endSilence(db: Kysely<PanelSchema>, id: number, by: string, nowMs: number): Promise<SilenceView | null> {
  const row = await db
    .updateTable("alert_silences")
    .set({ ended_at: nowMs, ended_by: by })
    .where("id", "=", id)
    .where("ended_at", "is", null)
    .where("ends_at", ">", nowMs)
    .returningAll()
    .executeTakeFirst();
  return row ? silenceView(row, nowMs) : null;
}

/** Silences still on, and those of the last 7 days, newest first. */
export async function listSilences(db: Kysely<PanelSchema>, nowMs: number): Promise<SilenceView[]> {
  const rows = await db
    .selectFrom("alert_silences")
    .selectAll()
    .where("ends_at", ">", nowMs - 7 * 86_400_000)
    .orderBy("id", "desc")
    .limit(500)
    .execute();
  return rows.map((r) => silenceView(r, nowMs));
}

export async function activeSilences(db: Kysely<PanelSchema>, nowMs: number): Promise<ActiveSilence[]> {
  const rows = await db.selectFrom("alert_silences").selectAll().where("ended_at", "is", null).where("ends_at", ">", nowMs).execute();
  return rows.map((r) => ({ id: r.id, host: globToRegExp(r.host_pattern), unit: r.unit_pattern === null ? null : globToRegExp(r.unit_pattern), rule: r.rule }));
}

/** Whether one of the silences mutes this alert ("" unit: the host's own alerts, muted only by a host-wide silence). */
export function isSilenced(silences: readonly ActiveSilence[], a: { host: string; unit: string; rule: AlertRuleId | string }): boolean {
  return silences.some((s) => s.host.test(a.host) && (s.rule === null || s.rule === a.rule) && (s.unit === null || (a.unit !== "" && s.unit.test(a.unit))));
}

function silenceView(r: SilenceRow, nowMs: number): SilenceView {
  return {
    id: r.id,
    host: r.host_pattern,
    unit: r.unit_pattern,
    rule: r.rule as AlertRuleId | null,
    reason: r.reason,
    createdBy: r.created_by,
    createdAtMs: r.created_at,
    endsAtMs: r.ends_at,
    endedAtMs: r.ended_at,
    endedBy: r.ended_by,
    active: r.ended_at === null && r.ends_at > nowMs,
  };
}
