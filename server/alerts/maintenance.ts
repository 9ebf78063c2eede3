/**
 * Planned maintenance windows: "gpu-a's vllm units, Sundays 02:00–04:00 Europe/Berlin" or
 * "gpu-b, tonight 22:00–23:30 UTC". During one, alerts for its units open as usual (the Alerts
 * page shows them, marked) but nothing is sent; one still open when the window ends is told then
 * (as after a silence). Windows come from `maintenance.create` (the database, every replica
 * sees them) or the config file (`[[panel.maintenance]]` → GPUDECK_MAINTENANCE, read-only).
 * Recurring windows are cron expressions in a time zone (croner), so "02:00 local" stays 02:00
 * local across a daylight-saving change.
 */
import { Cron } from "croner";
import type { Kysely, Selectable } from "kysely";
import { z } from "zod";
import { createMaintenanceInput, type CreateMaintenanceInput, type MaintenanceOccurrence, type MaintenanceWindowView } from "../contract/maintenance";
import { matchesUnitPatterns } from "../contract/unitNames";
import type { MaintenanceWindowsTable } from "../store/alertTables";
import type { PanelSchema } from "../store/schema";

type Row = Selectable<MaintenanceWindowsTable>;

/** A window as the engine and the status page use it (from the database or the config file): the view without its phase. */
export type MaintenanceWindow = Omit<MaintenanceWindowView, "phase" | "current">;

export class MaintenanceError extends Error {}

const crons = new Map<string, Cron>();

/** A paused Cron (no timer; only asked for run times); throws MaintenanceError for a bad expression or zone. */
export function cronOf(expr: string, timeZone: string): Cron {
  const key = `${timeZone}\u0000${expr}`;
  let c = crons.get(key);
  if (!c) {
    try {
      new Intl.DateTimeFormat("en", { timeZone }).format(0);
    } catch {
      throw new MaintenanceError(`timeZone "${timeZone}" is not a time zone (e.g. "UTC", "Europe/Berlin")`);
    }
    try {
      c = new Cron(expr, { timezone: timeZone, paused: true });
    } catch (err) {
      throw new MaintenanceError(`cron "${expr}" is not a cron expression: ${(err as Error).message}`);
    }
    if (crons.size > 500) crons.clear();
    crons.set(key, c);
  }
  return c;
}

/** Does the window cover this unit of this host ("" unit: the host's own alerts, covered by "host:*")? */
export function coversUnit(w: Pick<MaintenanceWindow, "units">, host: string, unit: string): boolean {
  return matchesUnitPatterns(unit, host, w.units);
}

/** The occurrence that holds at `atMs`, or null. An ended window holds nothing after it was ended. */
export function occurrenceAt(w: MaintenanceWindow, atMs: number): MaintenanceOccurrence | null {
  if (w.endedAtMs !== null && atMs >= w.endedAtMs) return null;
  const cut = (o: MaintenanceOccurrence) => (w.endedAtMs !== null ? { ...o, endsAtMs: Math.min(o.endsAtMs, w.endedAtMs) } : o);
  if (w.cron === null) {
    return w.startsAtMs !== null && w.endsAtMs !== null && atMs >= w.startsAtMs && atMs < w.endsAtMs
      ? cut({ startsAtMs: w.startsAtMs, endsAtMs: w.endsAtMs })
      : null;
  }
  const d = w.durationMinutes! * 60_000;
  // the first run after (at − duration) started within the last `duration`, if at all
  const start =
    cronOf(w.cron, w.timeZone ?? "UTC")
      .nextRun(new Date(atMs - d))
      ?.getTime() ?? null;
  if (start === null || start > atMs) return null;
  return cut({ startsAtMs: start, endsAtMs: start + d });
}

/** The next occurrence that starts after `atMs`; null when none will. */
export function nextOccurrence(w: MaintenanceWindow, atMs: number): MaintenanceOccurrence | null {
  if (w.endedAtMs !== null) return null;
  if (w.cron === null) return w.startsAtMs !== null && w.endsAtMs !== null && w.startsAtMs > atMs ? { startsAtMs: w.startsAtMs, endsAtMs: w.endsAtMs } : null;
  const start =
    cronOf(w.cron, w.timeZone ?? "UTC")
      .nextRun(new Date(atMs))
      ?.getTime() ?? null;
  return start === null ? null : { startsAtMs: start, endsAtMs: start + w.durationMinutes! * 60_000 };
}

/** Every occurrence overlapping [fromMs, toMs] (for uptime), oldest first, at most `max`. */
export function occurrencesBetween(w: MaintenanceWindow, fromMs: number, toMs: number, max = 2000): MaintenanceOccurrence[] {
  const stop = Math.min(toMs, w.endedAtMs ?? Infinity);
  const cut = (o: MaintenanceOccurrence) => ({ startsAtMs: o.startsAtMs, endsAtMs: Math.min(o.endsAtMs, stop) });
  if (w.cron === null) {
    if (w.startsAtMs === null || w.endsAtMs === null || w.startsAtMs >= stop || w.endsAtMs <= fromMs) return [];
    return [cut({ startsAtMs: w.startsAtMs, endsAtMs: w.endsAtMs })];
  }
  const d = w.durationMinutes! * 60_000;
  const cron = cronOf(w.cron, w.timeZone ?? "UTC");
  const out: MaintenanceOccurrence[] = [];
  let at = fromMs - d;
  while (out.length < max) {
    const start = cron.nextRun(new Date(at))?.getTime() ?? null;
    if (start === null || start >= stop) break;
    out.push(cut({ startsAtMs: start, endsAtMs: start + d }));
    at = start;
  }
  return out;
}

/** The windows holding now for this unit: the latest end among them, or null. */
export function maintenanceUntil(windows: readonly MaintenanceWindow[], host: string, unit: string, atMs: number): number | null {
  let until: number | null = null;
  for (const w of windows) {
    if (!coversUnit(w, host, unit)) continue;
    const o = occurrenceAt(w, atMs);
    if (o && (until === null || o.endsAtMs > until)) until = o.endsAtMs;
  }
  return until;
}

export function windowView(w: MaintenanceWindow, nowMs: number): MaintenanceWindowView {
  const now = occurrenceAt(w, nowMs);
  const next = now ? null : nextOccurrence(w, nowMs);
  return { ...w, phase: now ? "now" : next ? "next" : "past", current: now ?? next };
}

function fromRow(r: Row): MaintenanceWindow {
  return {
    id: r.id,
    name: r.name,
    units: JSON.parse(r.units) as string[],
    startsAtMs: r.starts_at,
    endsAtMs: r.ends_at,
    cron: r.cron,
    durationMinutes: r.duration_minutes,
    timeZone: r.time_zone,
    excludeFromUptime: r.exclude_uptime === 1,
    source: "panel",
    createdBy: r.created_by,
    createdAtMs: r.created_at,
    endedAtMs: r.ended_at,
    endedBy: r.ended_by,
  };
}

/** Check what `create` takes beyond its schema: the cron expression and time zone. */
export function checkWindow(input: CreateMaintenanceInput): void {
  if ("cron" in input) cronOf(input.cron, input.timeZone);
}

export async function createWindow(db: Kysely<PanelSchema>, input: CreateMaintenanceInput, by: string, nowMs: number): Promise<MaintenanceWindow> {
  checkWindow(input);
  const recurring = "cron" in input;
  const row = await db
    .insertInto("maintenance_windows")
    .values({
      name: input.name,
      units: JSON.stringify(input.units),
      starts_at: recurring ? null : input.startsAt,
      ends_at: recurring ? null : input.endsAt,
      cron: recurring ? input.cron : null,
      duration_minutes: recurring ? input.durationMinutes : null,
      time_zone: recurring ? input.timeZone : null,
      exclude_uptime: input.excludeFromUptime === false ? 0 : 1,
      created_by: by,
      created_at: nowMs,
      ended_at: null,
      ended_by: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return fromRow(row);
}

/** End a window now (a recurring one for good); null when there is none of that id still to hold. */
export async function endWindow(db: Kysely<PanelSchema>, id: number, by: string, nowMs: number): Promise<MaintenanceWindow | null> {
  const row = await db
    .updateTable("maintenance_windows")
    .set({ ended_at: nowMs, ended_by: by })
    .where("id", "=", id)
    .where("ended_at", "is", null)
    .returningAll()
    .executeTakeFirst();
  return row ? fromRow(row) : null;
}

/** The database's windows that may still hold, and those ended (or over) in the last 30 days. */
export async function dbWindows(db: Kysely<PanelSchema>, nowMs: number): Promise<MaintenanceWindow[]> {
  const since = nowMs - 30 * 86_400_000;
  const rows = await db
    .selectFrom("maintenance_windows")
    .selectAll()
    .where((eb) => eb.or([eb("ended_at", "is", null), eb("ended_at", ">", since)]))
    .where((eb) => eb.or([eb("ends_at", "is", null), eb("ends_at", ">", since)]))
    .orderBy("id", "desc")
    .limit(1000)
    .execute();
  return rows.map(fromRow);
}

/** GPUDECK_MAINTENANCE (JSON list; the config file's [[panel.maintenance]]): the windows `create` takes, read-only. */
export function maintenanceFromEnv(json: string | undefined): MaintenanceWindow[] {
  if (!json?.trim()) return [];
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    throw new MaintenanceError(`GPUDECK_MAINTENANCE is not JSON: ${(err as Error).message}`);
  }
  const parsed = z.array(createMaintenanceInput).max(200).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const [i, ...rest] = issue.path.map(String);
    throw new MaintenanceError(`GPUDECK_MAINTENANCE${i === undefined ? "" : `[${i}]`}${rest.length ? `.${rest.join(".")}` : ""}: ${issue.message}`);
  }
  return parsed.data.map((input, i) => {
    try {
      checkWindow(input);
    } catch (err) {
      throw new MaintenanceError(`GPUDECK_MAINTENANCE[${i}]: ${(err as Error).message}`);
    }
    const recurring = "cron" in input;
    return {
      id: `config-${i + 1}`,
      name: input.name,
      units: input.units,
      startsAtMs: recurring ? null : input.startsAt,
      endsAtMs: recurring ? null : input.endsAt,
      cron: recurring ? input.cron : null,
      durationMinutes: recurring ? input.durationMinutes : null,
      timeZone: recurring ? input.timeZone : null,
      excludeFromUptime: input.excludeFromUptime !== false,
      source: "config" as const,
      createdBy: null,
      createdAtMs: null,
      endedAtMs: null,
      endedBy: null,
    };
  });
}
