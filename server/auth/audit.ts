/**
 * The audit log: every action and every refused action, in the panel database.
 *
 * Conventional values (free text, so new actions need no migration):
 *   action:  start | stop | restart | reset-failed | kill | login | logout | setup |
 *            user.add | user.passwd | user.disable | user.enable | user.update | ...
 *   outcome: refused | pending (job queued; updated when the job ends) | systemd job results
 *            (done | failed | canceled | timeout | dependency | skipped | ...) | ok | error
 */
import type { PanelDb } from "./db";
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

/** Each filter of `queryAudit` and its SQL condition (combined with AND). */
const AUDIT_FILTERS: readonly [Exclude<keyof AuditQuery, "limit">, string][] = [
  ["user", "user = ? COLLATE NOCASE"],
  ["unit", "unit = ?"],
  ["action", "action = ?"],
  ["host", "host = ?"],
  ["outcome", "outcome = ?"],
  ["from", "at >= ?"],
  ["to", "at <= ?"],
  ["before", "id < ?"],
];

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

interface AuditDbRow {
  id: number;
  at: number;
  user: string | null;
  role: string | null;
  source_addr: string | null;
  host: string | null;
  unit: string | null;
  action: string;
  reason: string | null;
  outcome: string;
  job_id: number | null;
  detail: string | null;
}

function toRow(r: AuditDbRow): AuditRow {
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
  constructor(
    private readonly db: PanelDb,
    options: { clock?: Clock } = {},
  ) {
    this.clock = options.clock ?? systemClock;
  }

  /** Store an entry; returns its id (to update the outcome when the job ends). */
  recordAudit(entry: AuditEntry): number {
    const jobId = typeof entry.jobId === "number" && Number.isSafeInteger(entry.jobId) ? entry.jobId : null;
    const info = this.db
      .prepare(
        `INSERT INTO audit_log (at, user, role, source_addr, host, unit, action, reason, outcome, job_id, detail)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        entry.at ?? this.clock(),
        clip(entry.user),
        clip(entry.role),
        clip(entry.sourceAddr),
        clip(entry.host),
        clip(entry.unit),
        clip(entry.action) ?? "unknown",
        clip(entry.reason, REASON_MAX),
        clip(entry.outcome) ?? "unknown",
        jobId,
        clip(entry.detail, DETAIL_MAX),
      );
    return Number(info.lastInsertRowid);
  }

  /** Set the outcome (and optionally the job id / detail) of an entry. False when no such entry. */
  updateAuditOutcome(id: number, outcome: string, extra: { jobId?: number | null; detail?: string | null } = {}): boolean {
    const sets = ["outcome = ?"];
    const args: (string | number | null)[] = [clip(outcome) ?? "unknown"];
    if (extra.jobId !== undefined) {
      sets.push("job_id = ?");
      args.push(typeof extra.jobId === "number" && Number.isSafeInteger(extra.jobId) ? extra.jobId : null);
    }
    if (extra.detail !== undefined) {
      sets.push("detail = ?");
      args.push(clip(extra.detail, DETAIL_MAX));
    }
    return this.db.prepare(`UPDATE audit_log SET ${sets.join(", ")} WHERE id = ?`).run(...args, id).changes > 0;
  }

  /**
   * When only the job is known (a JobRemoved from the agent): update the newest still-pending
   * entry for that host and job id. Returns the entry's id, or null when none matched.
   */
  updateAuditOutcomeByJob(host: string, jobId: number, outcome: string): number | null {
    const row = this.db.prepare("SELECT id FROM audit_log WHERE host = ? AND job_id = ? AND outcome = 'pending' ORDER BY id DESC LIMIT 1").get(host, jobId) as
      { id: number } | undefined;
    if (!row) return null;
    this.updateAuditOutcome(row.id, outcome);
    return row.id;
  }

  getAudit(id: number): AuditRow | null {
    const r = this.db.prepare("SELECT * FROM audit_log WHERE id = ?").get(id) as AuditDbRow | undefined;
    return r ? toRow(r) : null;
  }

  /** Newest first. Filters are exact matches (user case-insensitive), combined with AND. */
  queryAudit(query: AuditQuery = {}): AuditRow[] {
    const where: string[] = [];
    const args: (string | number)[] = [];
    for (const [key, clause] of AUDIT_FILTERS) {
      const value = query[key];
      if (value === undefined) continue;
      where.push(clause);
      args.push(value);
    }
    const requested = query.limit ?? 100;
    const limit = Number.isFinite(requested) ? Math.min(Math.max(1, Math.floor(requested)), AUDIT_QUERY_MAX_LIMIT) : 100;
    const sql = `SELECT * FROM audit_log ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT ?`;
    return (this.db.prepare(sql).all(...args, limit) as AuditDbRow[]).map(toRow);
  }

  /** Retention: delete entries older than `olderThanMs` before now. Returns how many. */
  pruneAudit(olderThanMs: Ms): number {
    if (!Number.isFinite(olderThanMs) || olderThanMs < 0) throw new Error("pruneAudit: olderThanMs must be a non-negative number");
    return this.db.prepare("DELETE FROM audit_log WHERE at < ?").run(this.clock() - olderThanMs).changes;
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
