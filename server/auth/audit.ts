/**
 * The audit log: every action and every refused action, in the panel database.
 *
 * Conventional values (free text, so new actions need no migration):
 *   action:  start | stop | restart | reset-failed | kill | login | logout | setup |
 *            user.add | user.passwd | user.disable | user.enable | user.update | ...
 *   outcome: refused | pending (job queued; updated when the job ends) | systemd job results
 *            (done | failed | canceled | timeout | dependency | skipped | ...) | ok | error
 *
 * Every row written or settled publishes an `audit` panel event in the same transaction, so
 * every replica (and its live audit stream) learns of it.
 */
import type { Selectable } from "kysely";
import type { Db, Store } from "../store/database";
import { NO_NOTIFIER, publishEvent, type EventNotifier } from "../store/events";
import type { StoreSource } from "../store/lazyStore";
import type { AuditLogTable } from "../store/schema";
import { systemClock, type Clock, type Ms } from "./types";

export interface AuditEntry {
  /** Defaults to now. */
  at?: Ms;
  user: string | null;
  role: string | null;
  sourceAddr: string | null;
  host: string | null;
  unit: string | null;
  action: string;
  /** The operator's reason for the action, or why it was refused. */
  reason: string | null;
  outcome: string;
  jobId?: number | null;
  detail?: string | null;
}

export interface AuditRow {
  id: number;
  at: Ms;
  user: string | null;
  role: string | null;
  sourceAddr: string | null;
  host: string | null;
  unit: string | null;
  action: string;
  reason: string | null;
  outcome: string;
  jobId: number | null;
  detail: string | null;
}

export interface AuditQuery {
  user?: string;
  unit?: string;
  action?: string;
  host?: string;
  outcome?: string;
  /** Inclusive lower bound on `at`. */
  from?: Ms;
  /** Inclusive upper bound on `at`. */
  to?: Ms;
  /** Default 100, at most 1000. */
  limit?: number;
  /** Keyset paging: only rows with id < before (pass the last row's id of the previous page). */
  before?: number;
}

export const AUDIT_QUERY_MAX_LIMIT = 1000;

// Hostile inputs get audited verbatim; bound what one request can make us store.
const FIELD_MAX = 512;
const REASON_MAX = 2000;
const DETAIL_MAX = 8000;

function clip(value: string | null | undefined, max = FIELD_MAX): string | null {
  if (value === null || value === undefined) return null;
  const s = String(value);
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

const safeJobId = (jobId: unknown): number | null => (typeof jobId === "number" && Number.isSafeInteger(jobId) ? jobId : null);

export function toAuditRow(r: Selectable<AuditLogTable>): AuditRow {
  return {
    id: r.id,
    at: r.at,
    user: r.user,
    role: r.role,
    sourceAddr: r.source_addr,
    host: r.host,
    unit: r.unit,
    action: r.action,
    reason: r.reason,
    outcome: r.outcome,
    jobId: r.job_id,
    detail: r.detail,
  };
}

export class AuditStore {
  private readonly clock: Clock;
  private readonly events: EventNotifier;
  constructor(
    private readonly source: StoreSource,
    options: { clock?: Clock; events?: EventNotifier } = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.events = options.events ?? NO_NOTIFIER;
  }

  private async announce(tx: Db, store: Store, row: Selectable<AuditLogTable>): Promise<void> {
    const { id, action, host, unit, user, outcome } = row;
    await publishEvent(tx, store.dialect, "audit", { id, action, host, unit, user, outcome }, this.clock());
  }

  /** Store an entry inside the caller's transaction (with its event); returns its id. */
  async recordAuditIn(tx: Db, store: Store, entry: AuditEntry): Promise<number> {
    const row = await tx
      .insertInto("audit_log")
      .values({
        at: entry.at ?? this.clock(),
        user: clip(entry.user),
        role: clip(entry.role),
        source_addr: clip(entry.sourceAddr),
        host: clip(entry.host),
        unit: clip(entry.unit),
        action: clip(entry.action) ?? "unknown",
        reason: clip(entry.reason, REASON_MAX),
        outcome: clip(entry.outcome) ?? "unknown",
        job_id: safeJobId(entry.jobId),
        detail: clip(entry.detail, DETAIL_MAX),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await this.announce(tx, store, row);
    return row.id;
  }

  /** Store an entry; returns its id (to update the outcome when the job ends). */
  async recordAudit(entry: AuditEntry): Promise<number> {
    const store = await this.source.get();
    const id = await store.write((tx) => this.recordAuditIn(tx, store, entry));
    this.events.poke();
    return id;
  }

  /**
   * Store an entry once for every replica together: the first call with `key` writes it, later
   * ones (another replica seeing the same agent event) write nothing. Returns the id, or null.
   */
  async recordAuditOnce(key: string, entry: AuditEntry): Promise<number | null> {
    const store = await this.source.get();
    const id = await store.write(async (tx) => {
      const claimed = await tx
        .insertInto("audit_once")
        .values({ key: key.slice(0, 1000), at: this.clock() })
        .onConflict((oc) => oc.column("key").doNothing())
        .returning("key")
        .executeTakeFirst();
      return claimed ? this.recordAuditIn(tx, store, entry) : null;
    });
    if (id !== null) this.events.poke();
    return id;
  }

  /**
   * Set the outcome (and optionally the job id / detail) of an entry. False when no such entry, or
   * when `ifOutcome` is given and the entry's outcome is another (a replica settled it meanwhile).
   */
  async updateAuditOutcome(id: number, outcome: string, extra: { jobId?: number | null; detail?: string | null; ifOutcome?: string } = {}): Promise<boolean> {
    const store = await this.source.get();
    const changed = await store.write(async (tx) => {
      const row = await tx
        .updateTable("audit_log")
        .set({
          outcome: clip(outcome) ?? "unknown",
          ...(extra.jobId !== undefined ? { job_id: safeJobId(extra.jobId) } : {}),
          ...(extra.detail !== undefined ? { detail: clip(extra.detail, DETAIL_MAX) } : {}),
        })
        .where("id", "=", id)
        .$if(extra.ifOutcome !== undefined, (q) => q.where("outcome", "=", extra.ifOutcome!))
        .returningAll()
        .executeTakeFirst();
      if (row) await this.announce(tx, store, row);
      return row !== undefined;
    });
    if (changed) this.events.poke();
    return changed;
  }

  /**
   * When only the job is known (a JobRemoved from the agent): update the newest still-pending
   * entry for that host and job id. Returns the entry's id, or null when none matched (also when
   * another replica settled it first: only a pending row is changed).
   */
  async updateAuditOutcomeByJob(host: string, jobId: number, outcome: string): Promise<number | null> {
    const store = await this.source.get();
    const id = await store.write(async (tx) => {
      const pending = await tx
        .selectFrom("audit_log")
        .select("id")
        .where("host", "=", host)
        .where("job_id", "=", jobId)
        .where("outcome", "=", "pending")
        .orderBy("id", "desc")
        .limit(1)
        .executeTakeFirst();
      if (!pending) return null;
      const row = await tx
        .updateTable("audit_log")
        .set({ outcome: clip(outcome) ?? "unknown" })
        .where("id", "=", pending.id)
        .where("outcome", "=", "pending")
        .returningAll()
        .executeTakeFirst();
      if (!row) return null;
      await this.announce(tx, store, row);
      return row.id;
    });
    if (id !== null) this.events.poke();
    return id;
  }

  async getAudit(id: number): Promise<AuditRow | null> {
    const { db } = await this.source.get();
    const r = await db.selectFrom("audit_log").selectAll().where("id", "=", id).executeTakeFirst();
    return r ? toAuditRow(r) : null;
  }

  /** Newest first. Filters are exact matches (user case-insensitive), combined with AND. */
  async queryAudit(query: AuditQuery = {}): Promise<AuditRow[]> {
    const { db } = await this.source.get();
    const requested = query.limit ?? 100;
    const limit = Number.isFinite(requested) ? Math.min(Math.max(1, Math.floor(requested)), AUDIT_QUERY_MAX_LIMIT) : 100;
    let q = db.selectFrom("audit_log").selectAll();
    if (query.user !== undefined) q = q.where((eb) => eb(eb.fn("lower", ["user"]), "=", eb.fn("lower", [eb.val(query.user!)])));
    if (query.unit !== undefined) q = q.where("unit", "=", query.unit);
    if (query.action !== undefined) q = q.where("action", "=", query.action);
    if (query.host !== undefined) q = q.where("host", "=", query.host);
    if (query.outcome !== undefined) q = q.where("outcome", "=", query.outcome);
    if (query.from !== undefined) q = q.where("at", ">=", query.from);
    if (query.to !== undefined) q = q.where("at", "<=", query.to);
    if (query.before !== undefined) q = q.where("id", "<", query.before);
    const rows = await q.orderBy("id", "desc").limit(limit).execute();
    return rows.map(toAuditRow);
  }

  /** Retention: delete entries older than `olderThanMs` before now. Returns how many. */
  async pruneAudit(olderThanMs: Ms): Promise<number> {
    if (!Number.isFinite(olderThanMs) || olderThanMs < 0) throw new Error("pruneAudit: olderThanMs must be a non-negative number");
    const { db } = await this.source.get();
    const cutoff = this.clock() - olderThanMs;
    const r = await db.deleteFrom("audit_log").where("at", "<", cutoff).executeTakeFirst();
    await db.deleteFrom("audit_once").where("at", "<", cutoff).execute();
    return Number(r.numDeletedRows);
  }
}

// ---------------------------------------------------------------------------------------------
// CSV export

/**
 * One CSV cell: always quoted, quotes doubled. Text that a spreadsheet would run as a formula
 * (starting with = + - @, or a tab / carriage return that some apps skip before one) gets a
 * leading apostrophe so it is shown as text.
 */
export function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '""';
  let text = String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return `"${text.replace(/"/g, '""')}"`;
}

export const AUDIT_CSV_COLUMNS = ["id", "time", "user", "role", "source_addr", "host", "unit", "action", "reason", "outcome", "job_id", "detail"] as const;

/** The CSV's header line (with CRLF), behind a BOM when asked: a BOM makes Excel read the file as UTF-8. */
export function auditCsvHeader(options: { bom?: boolean } = {}): string {
  return `${options.bom ? "\uFEFF" : ""}${AUDIT_CSV_COLUMNS.map((c) => csvCell(c)).join(",")}\r\n`;
}

/** One row as a CSV line (with CRLF); `time` is ISO 8601 UTC. */
export function auditCsvLine(r: AuditRow): string {
  return `${[
    csvCell(r.id),
    csvCell(Number.isFinite(r.at) ? new Date(r.at).toISOString() : null),
    csvCell(r.user),
    csvCell(r.role),
    csvCell(r.sourceAddr),
    csvCell(r.host),
    csvCell(r.unit),
    csvCell(r.action),
    csvCell(r.reason),
    csvCell(r.outcome),
    csvCell(r.jobId),
    csvCell(r.detail),
  ].join(",")}\r\n`;
}

/** RFC 4180 CSV (CRLF line ends) with a header row; `time` is ISO 8601 UTC. */
export function auditToCsv(rows: readonly AuditRow[], options: { bom?: boolean } = {}): string {
  return auditCsvHeader(options) + rows.map(auditCsvLine).join("");
}
