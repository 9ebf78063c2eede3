/**
 * The agent's history on disk (`<dataDir>/agent-history.db`, SQLite): unit transitions, who
 * acted and with what result, GPU samples every 10 s, and the engines' load and latency every 30 s. An agent restarted for an upgrade or
 * after a crash starts with the timeline and the memory chart it had, instead of a blank page
 * beginning "now". Writes are small and synchronous (a transition is rare, a sample is one row
 * every 10 s); reads happen once, at start.
 *
 * A store that cannot be written (disk full, read-only) must never take the agent down: the
 * caller logs the failure and keeps running with memory-only history.
 */
import { closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { ActionRecord } from "../contract/events";
import type { EngineHistoryRow, ReadinessTransition } from "../contract/readiness";
import type { GpuSample, ObservationGap, UnitTransition } from "../contract/types";

export const HISTORY_DB_FILE = "agent-history.db";
// 3: readiness_transitions (the timeline's readiness lane); 4: engine_rows (units.engineHistory)
const SCHEMA_VERSION = 4;

export interface HistoryRetention {
  /** transitions and actions older than this are deleted (default 30 days) */
  eventsMs: number;
  /** GPU samples older than this are deleted (default 24 h, the longest chart range) */
  samplesMs: number;
}

export const DEFAULT_RETENTION: HistoryRetention = { eventsMs: 30 * 24 * 3600_000, samplesMs: 24 * 3600_000 };

export class HistoryStore {
  private readonly db: Database.Database;
  private readonly insertTransition: Database.Statement;
  private readonly upsertAction: Database.Statement;
  private readonly insertSample: Database.Statement;
  private readonly insertReadiness: Database.Statement;
  private readonly insertEngineRow: Database.Statement;

  private constructor(
    db: Database.Database,
    readonly file: string,
    readonly retention: HistoryRetention,
  ) {
    this.db = db;
    this.insertTransition = db.prepare("INSERT INTO transitions (unit, at_usec, body) VALUES (?, ?, ?)");
    this.upsertAction = db.prepare("INSERT INTO actions (id, at_ms, body) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET body = excluded.body");
    this.insertSample = db.prepare("INSERT OR REPLACE INTO gpu_samples (at_ms, body) VALUES (?, ?)");
    this.insertReadiness = db.prepare("INSERT INTO readiness_transitions (unit, at_ms, body) VALUES (?, ?, ?)");
    this.insertEngineRow = db.prepare("INSERT INTO engine_rows (unit, at_ms, body) VALUES (?, ?, ?)");
  }

  /** Open (creating if needed) the store in `dataDir`. Throws with the file's path on failure. */
  static open(dataDir: string, retention: Partial<HistoryRetention> = {}): HistoryStore {
    const file = join(dataDir, HISTORY_DB_FILE);
    let db: Database.Database | null = null;
    try {
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      closeSync(openSync(file, "a", 0o600)); // never exists with the umask's looser mode
      db = new Database(file, { timeout: 2000 });
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      const version = db.pragma("user_version", { simple: true }) as number;
      if (version > SCHEMA_VERSION) {
        throw new Error(`it has schema version ${version}, newer than this agent knows (${SCHEMA_VERSION}); refusing to downgrade`);
      }
      db.exec(`
        CREATE TABLE IF NOT EXISTS transitions (unit TEXT NOT NULL, at_usec INTEGER NOT NULL, body TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS transitions_unit_at ON transitions (unit, at_usec);
        CREATE TABLE IF NOT EXISTS actions (id TEXT PRIMARY KEY, at_ms INTEGER NOT NULL, body TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS actions_at ON actions (at_ms);
        CREATE TABLE IF NOT EXISTS gpu_samples (at_ms INTEGER PRIMARY KEY, body TEXT NOT NULL);
        -- one row per agent run: when it started and when it was last known alive
        CREATE TABLE IF NOT EXISTS agent_runs (boot_id TEXT PRIMARY KEY, started_ms INTEGER NOT NULL, last_seen_ms INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS readiness_transitions (unit TEXT NOT NULL, at_ms INTEGER NOT NULL, body TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS readiness_transitions_unit_at ON readiness_transitions (unit, at_ms);
        CREATE TABLE IF NOT EXISTS engine_rows (unit TEXT NOT NULL, at_ms INTEGER NOT NULL, body TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS engine_rows_at ON engine_rows (at_ms);
      `);
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
      return new HistoryStore(db, file, { ...DEFAULT_RETENTION, ...retention });
    } catch (err) {
      db?.close();
      throw new Error(`cannot open the history store ${file}: ${(err as Error).message}`, { cause: err });
    }
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  addTransition(t: UnitTransition): void {
    this.insertTransition.run(t.unit, Math.round(t.atUsec), JSON.stringify(t));
  }

  /** Insert or update (an action's outcome arrives when its job finishes). */
  saveAction(a: ActionRecord): void {
    this.upsertAction.run(a.id, a.atMs, JSON.stringify(a));
  }

  addSample(s: GpuSample): void {
    this.insertSample.run(s.atMs, JSON.stringify(s));
  }

  /**
   * The last `perUnit` transitions of every unit, oldest first. Age is `prune`'s business: it
   * keeps, however old, the transition in force at its cutoff (a unit not started since boot
   * has one at time 0).
   */
  loadTransitions(perUnit: number): Map<string, UnitTransition[]> {
    const rows = this.db
      .prepare(
        `SELECT unit, body FROM (
           SELECT unit, at_usec, rowid AS r, body, ROW_NUMBER() OVER (PARTITION BY unit ORDER BY at_usec DESC, rowid DESC) AS n
           FROM transitions
         ) WHERE n <= ? ORDER BY unit, at_usec, r`,
      )
      .all(perUnit) as { unit: string; body: string }[];
    const out = new Map<string, UnitTransition[]>();
    for (const row of rows) {
      const t = parseJson<UnitTransition>(row.body);
      if (!t) continue;
      let list = out.get(row.unit);
      if (!list) out.set(row.unit, (list = []));
      list.push(t);
    }
    return out;
  }

  addReadinessTransition(t: ReadinessTransition): void {
    this.insertReadiness.run(t.unit, Math.round(t.atMs), JSON.stringify(t));
  }

  /** The last `perUnit` readiness transitions of every unit, oldest first (as loadTransitions). */
  loadReadinessTransitions(perUnit: number): Map<string, ReadinessTransition[]> {
    const rows = this.db
      .prepare(
        `SELECT unit, body FROM (
           SELECT unit, at_ms, rowid AS r, body, ROW_NUMBER() OVER (PARTITION BY unit ORDER BY at_ms DESC, rowid DESC) AS n
           FROM readiness_transitions
         ) WHERE n <= ? ORDER BY unit, at_ms, r`,
      )
      .all(perUnit) as { unit: string; body: string }[];
    const out = new Map<string, ReadinessTransition[]>();
    for (const row of rows) {
      const t = parseJson<ReadinessTransition>(row.body);
      if (!t) continue;
      let list = out.get(row.unit);
      if (!list) out.set(row.unit, (list = []));
      list.push(t);
    }
    return out;
  }

  addEngineRow(unit: string, row: EngineHistoryRow): void {
    this.insertEngineRow.run(unit, Math.round(row.atMs), JSON.stringify(row));
  }

  /** Engine rows at or after `sinceMs` per unit, oldest first. */
  loadEngineRows(sinceMs: number): Map<string, EngineHistoryRow[]> {
    const rows = this.db.prepare("SELECT unit, body FROM engine_rows WHERE at_ms >= ? ORDER BY unit, at_ms").all(sinceMs) as { unit: string; body: string }[];
    const out = new Map<string, EngineHistoryRow[]>();
    for (const r of rows) {
      const row = parseJson<EngineHistoryRow>(r.body);
      if (!row) continue;
      let list = out.get(r.unit);
      if (!list) out.set(r.unit, (list = []));
      list.push(row);
    }
    return out;
  }

  /** This run of the agent begins (its gaps to earlier runs are what no agent observed). */
  beginRun(bootId: string, startedMs: number): void {
    this.db.prepare("INSERT OR REPLACE INTO agent_runs (boot_id, started_ms, last_seen_ms) VALUES (?, ?, ?)").run(bootId, startedMs, startedMs);
  }

  /** This run is still alive at `nowMs` (called every few seconds and on a clean stop). */
  touchRun(bootId: string, nowMs: number): void {
    this.db.prepare("UPDATE agent_runs SET last_seen_ms = MAX(last_seen_ms, ?) WHERE boot_id = ?").run(nowMs, bootId);
  }

  /**
   * Spans between consecutive runs, oldest first: from when the earlier run was last known
   * alive to when the next one started. After a crash the start is early by up to one touch
   * period (the agent touches every few seconds).
   */
  loadGaps(minGapMs = 1000): ObservationGap[] {
    const runs = this.db.prepare("SELECT started_ms AS startedMs, last_seen_ms AS lastSeenMs FROM agent_runs ORDER BY started_ms").all() as {
      startedMs: number;
      lastSeenMs: number;
    }[];
    const gaps: ObservationGap[] = [];
    for (let i = 1; i < runs.length; i++) {
      const fromMs = runs[i - 1]!.lastSeenMs;
      const toMs = runs[i]!.startedMs;
      if (toMs - fromMs >= minGapMs) gaps.push({ fromMs, toMs });
    }
    return gaps;
  }

  /** The last `limit` actions at or after `sinceMs`, oldest first. */
  loadActions(sinceMs: number, limit: number): ActionRecord[] {
    const rows = this.db
      .prepare("SELECT body FROM (SELECT at_ms, body FROM actions WHERE at_ms >= ? ORDER BY at_ms DESC LIMIT ?) ORDER BY at_ms")
      .all(sinceMs, limit) as { body: string }[];
    return rows.map((r) => parseJson<ActionRecord>(r.body)).filter((a): a is ActionRecord => a !== null);
  }

  /** GPU samples at or after `sinceMs`, oldest first. */
  loadSamples(sinceMs: number): GpuSample[] {
    const rows = this.db.prepare("SELECT body FROM gpu_samples WHERE at_ms >= ? ORDER BY at_ms").all(sinceMs) as { body: string }[];
    return rows.map((r) => parseJson<GpuSample>(r.body)).filter((s): s is GpuSample => s !== null);
  }

  /** Delete what is past retention. Returns the number of rows deleted. */
  prune(nowMs: number): number {
    const eventsCutoffMs = nowMs - this.retention.eventsMs;
    const run = this.db.transaction(() => {
      let n = this.db
        .prepare(
          // each unit keeps the transition in force at the cutoff: where its timeline begins
          `DELETE FROM transitions WHERE rowid IN (
             SELECT rowid FROM (
               SELECT rowid, ROW_NUMBER() OVER (PARTITION BY unit ORDER BY at_usec DESC, rowid DESC) AS n FROM transitions WHERE at_usec < ?
             ) WHERE n > 1
           )`,
        )
        .run(eventsCutoffMs * 1000).changes;
      n += this.db
        .prepare(
          // as transitions: each unit keeps the readiness in force at the cutoff
          `DELETE FROM readiness_transitions WHERE rowid IN (
             SELECT rowid FROM (
               SELECT rowid, ROW_NUMBER() OVER (PARTITION BY unit ORDER BY at_ms DESC, rowid DESC) AS n FROM readiness_transitions WHERE at_ms < ?
             ) WHERE n > 1
           )`,
        )
        .run(eventsCutoffMs).changes;
      n += this.db.prepare("DELETE FROM actions WHERE at_ms < ?").run(eventsCutoffMs).changes;
      n += this.db.prepare("DELETE FROM gpu_samples WHERE at_ms < ?").run(nowMs - this.retention.samplesMs).changes;
      n += this.db.prepare("DELETE FROM engine_rows WHERE at_ms < ?").run(nowMs - this.retention.samplesMs).changes;
      // a run that ended before the cutoff only bounds a gap nobody can scroll to any more
      n += this.db
        .prepare("DELETE FROM agent_runs WHERE last_seen_ms < ? AND started_ms < (SELECT MAX(started_ms) FROM agent_runs)")
        .run(eventsCutoffMs).changes;
      return n;
    });
    return run();
  }
}

function parseJson<T>(text: string): T | null {
  try {
    return JSON.parse(text) as T;
  } catch {
    return null; // one damaged row must not cost the rest of the history
  }
}
