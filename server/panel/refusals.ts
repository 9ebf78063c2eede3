/**
 * Refused requests in the audit log: one recorder, used by the audited middleware (procedures)
 * and by the endpoint (requests refused before any procedure ran). A caller repeating a refused
 * request must not be able to flood the log: at most `perMinute` refusal rows per caller (user,
 * or address when unknown; IPv6 by its /64, which one client typically holds whole) a minute,
 * at most `totalPerMinute` from everyone together, and what a refused request makes us store is
 * cut short (it is kept for the audit retention, 90 days by default).
 *
 * Refusals anyone can cause without signing in (a setup attempt, an identity the trusted proxy
 * sends that the panel refuses) are capped harder (`recordAnonymous`): at most
 * ANONYMOUS_REFUSALS_PER_MINUTE rows per kind and address, ANONYMOUS_REFUSALS_TOTAL_PER_MINUTE per
 * kind from everyone, then the caps above: 200 bad calls leave a handful of rows.
 */
import type { TRPCError } from "@trpc/server";
import type { Actor } from "../contract/actors";
import { unitActionOfProcedure, USER_PROCEDURE_AUDIT_ACTIONS } from "../contract/procedures";
import type { AuditStore } from "../auth/audit";
import { addressBucket } from "../auth/rateLimit";
import { ALERT_PROCEDURE_AUDIT_ACTIONS } from "./routers/auditActions";

/** Refusal rows from everyone together, per minute, by default. */
export const REFUSAL_ROWS_PER_MINUTE = 600;
/** Rows a minute of one kind of anonymous refusal from one address (IPv6: its /64)… */
export const ANONYMOUS_REFUSALS_PER_MINUTE = 5;
/** …and from everyone together. */
export const ANONYMOUS_REFUSALS_TOTAL_PER_MINUTE = 30;
/** How much of each free-text field of a refused request is stored. */
export const REFUSAL_FIELD_MAX = { action: 200, unit: 300, reason: 200, detail: 500 } as const;

export class RefusalAuditLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private total = { start: -Infinity, count: 0 };
  constructor(
    readonly perMinute = 60,
    private readonly clock: () => number = Date.now,
    readonly totalPerMinute = REFUSAL_ROWS_PER_MINUTE,
  ) {}

  /** "ok": record it; "capped": over the panel-wide cap for the first time this minute (say so once); "drop". */
  admit(key: string): "ok" | "capped" | "drop" {
    const now = this.clock();
    const w = this.windows.get(key);
    if (!w || now - w.start >= 60_000) {
      if (this.windows.size > 10_000) this.windows.clear();
      this.windows.set(key, { start: now, count: 1 });
    } else if (++w.count > this.perMinute) return "drop";
    if (now - this.total.start >= 60_000) this.total = { start: now, count: 0 };
    this.total.count++;
    if (this.total.count <= this.totalPerMinute) return "ok";
    return this.total.count === this.totalPerMinute + 1 ? "capped" : "drop";
  }

  allow(key: string): boolean {
    return this.admit(key) === "ok";
  }
}

/** The limiter's key for a caller: the user, or the address bucket (IPv6 /64) when nobody is known. */
export function refusalKey(actor: Actor | null, sourceAddr: string | null): string {
  return actor ? `user:${actor.user.toLowerCase().slice(0, 128)}` : `addr:${addressBucket(sourceAddr)}`;
}

function cut(value: string | null, max: number): string | null {
  return value !== null && value.length > max ? `${value.slice(0, max)}…` : value;
}

export interface Refusal {
  action: string;
  unit: string | null;
  reason: string | null;
  /** "refused" (the caller's request was not acceptable) or "error" (it failed on our side) */
  outcome: string;
  detail: string;
  /** The agent's host; undefined = the host the panel knows best right now. */
  host?: string | null;
}

/** Codes that mean "your request was not acceptable"; anything else is recorded as an error. */
export const REFUSAL_CODES = new Set<TRPCError["code"]>([
  "UNAUTHORIZED",
  "FORBIDDEN",
  "BAD_REQUEST",
  "CONFLICT",
  "PARSE_ERROR",
  "TOO_MANY_REQUESTS",
  "NOT_FOUND",
]);

/** A refusal of someone not signed in: a failed `setup.complete`, an identity from the trusted proxy refused. */
export interface AnonymousRefusal {
  action: "setup" | "proxy-login";
  sourceAddr: string | null;
  /** The name the request gave (a proxy's identity header), if any. */
  user: string | null;
  reason: string;
}

export class RefusalRecorder {
  constructor(
    private readonly audit: AuditStore,
    readonly limiter: RefusalAuditLimiter,
    private readonly knownHost: () => string | null,
    readonly anonymous = new RefusalAuditLimiter(ANONYMOUS_REFUSALS_PER_MINUTE, Date.now, ANONYMOUS_REFUSALS_TOTAL_PER_MINUTE),
  ) {}

  private capped(what: string, limit: number): Promise<number> {
    return this.audit.recordAudit({
      user: null,
      role: null,
      sourceAddr: null,
      host: null,
      unit: null,
      action: "audit.refusals",
      reason: null,
      outcome: "error",
      detail: `more than ${limit} ${what} this minute; the rest of this minute's are not recorded`,
    });
  }

  /** Record `refusal` unless its caller (or everyone) is over the cap this minute. */
  async record(request: { sourceAddr: string | null }, actor: Actor | null, refusal: Refusal): Promise<void> {
    await this.admitted(refusalKey(actor, request.sourceAddr), () => this.write(request, actor?.user ?? null, actor?.role ?? null, refusal));
  }

  /** A refusal anyone can repeat without signing in: the harder caps first, then those of `record`. */
  async recordAnonymous(r: AnonymousRefusal): Promise<void> {
    const admitted = this.anonymous.admit(`${r.action}:${refusalKey(null, r.sourceAddr)}`);
    if (admitted === "drop") return;
    if (admitted === "capped") {
      await this.capped(`refused ${r.action} requests from all addresses`, this.anonymous.totalPerMinute);
      return;
    }
    const refusal: Refusal = { action: r.action, unit: null, reason: r.reason, outcome: "refused", detail: r.reason, host: null };
    await this.admitted(refusalKey(null, r.sourceAddr), () => this.write(r, r.user, null, refusal));
  }

  private async admitted(key: string, write: () => Promise<void>): Promise<void> {
    const admitted = this.limiter.admit(key);
    if (admitted === "drop") return;
    if (admitted === "capped") await this.capped("refused requests", this.limiter.totalPerMinute);
    else await write();
  }

  private async write(request: { sourceAddr: string | null }, user: string | null, role: Actor["role"] | null, refusal: Refusal): Promise<void> {
    await this.audit.recordAudit({
      user: user === null ? null : cut(user, 128),
      role,
      sourceAddr: request.sourceAddr,
      host: refusal.host === undefined ? this.knownHost() : cut(refusal.host, 100),
      unit: cut(refusal.unit, REFUSAL_FIELD_MAX.unit),
      action: cut(refusal.action, REFUSAL_FIELD_MAX.action)!,
      reason: cut(refusal.reason, REFUSAL_FIELD_MAX.reason),
      outcome: refusal.outcome,
      detail: cut(refusal.detail, REFUSAL_FIELD_MAX.detail),
    });
  }
}

/**
 * Procedure path → audit action name ("units.resetFailed" → "reset-failed", "users.create" →
 * "user.add"). Other paths keep their name.
 */
export function auditActionForPath(path: string): string {
  const m = /^units\.(\w+)$/.exec(path);
  const action = m ? unitActionOfProcedure(m[1]!) : null;
  if (action) return action;
  const u = /^users\.(\w+)$/.exec(path);
  if (u && Object.hasOwn(USER_PROCEDURE_AUDIT_ACTIONS, u[1]!)) return USER_PROCEDURE_AUDIT_ACTIONS[u[1]! as keyof typeof USER_PROCEDURE_AUDIT_ACTIONS];
  if (Object.hasOwn(ALERT_PROCEDURE_AUDIT_ACTIONS, path)) return ALERT_PROCEDURE_AUDIT_ACTIONS[path]!;
  return path;
}
