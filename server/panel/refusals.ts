/**
 * Refused requests in the audit log: one recorder, used by the audited middleware (procedures)
 * and by the endpoint (requests refused before any procedure ran). A caller repeating a refused
 * request must not be able to flood the log: at most `perMinute` refusal rows per caller (user,
 * or address when unknown) a minute.
 */
import type { TRPCError } from "@trpc/server";
import type { Actor } from "../contract/actors";
import { unitActionOfProcedure, USER_PROCEDURE_AUDIT_ACTIONS } from "../contract/procedures";
import type { AuditStore } from "../auth/audit";

export class RefusalAuditLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  constructor(
    readonly perMinute = 60,
    private readonly clock: () => number = Date.now,
  ) {}
  allow(key: string): boolean {
    const now = this.clock();
    const w = this.windows.get(key);
    if (!w || now - w.start >= 60_000) {
      if (this.windows.size > 10_000) this.windows.clear();
      this.windows.set(key, { start: now, count: 1 });
      return true;
    }
    w.count++;
    return w.count <= this.perMinute;
  }
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

export class RefusalRecorder {
  constructor(
    private readonly audit: AuditStore,
    readonly limiter: RefusalAuditLimiter,
    private readonly knownHost: () => string | null,
  ) {}

  record(request: { sourceAddr: string | null }, actor: Actor | null, refusal: Refusal): void {
    const key = actor ? `user:${actor.user.toLowerCase()}` : `addr:${request.sourceAddr ?? "unknown"}`;
    if (!this.limiter.allow(key)) return;
    this.audit.recordAudit({
      user: actor?.user ?? null,
      role: actor?.role ?? null,
      sourceAddr: request.sourceAddr,
      host: refusal.host === undefined ? this.knownHost() : refusal.host,
      unit: refusal.unit,
      action: refusal.action,
      reason: refusal.reason,
      outcome: refusal.outcome,
      detail: refusal.detail,
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
  return path;
}
