/**
 * The panel's tRPC API, called by browsers. It mirrors the agent's procedure names, checks
 * who may do what on every procedure and subscription, audits every unit action and every
 * refused one, and forwards to the agent with the acting user attached. Subscriptions are
 * re-streamed: each browser stream opens one agent stream resuming from the same event id,
 * so the agent's ring buffer is the single source of truth for replay.
 *
 * Public (unauthenticated) procedures: session.me, session.login, session.logout,
 * setup.complete. Everything else needs a signed-in user (or demo mode's demo admin).
 */
import { tracked, TRPCError } from "@trpc/server";
import { ZodError, z } from "zod";
import type { AgentEvent } from "../contract/events";
import type { JournalEntry, UnitAction } from "../contract/types";
import { unitNameSchema } from "../contract/unitNames";
import { can, unitPermissions, type Action } from "../auth/authorize";
import type { PanelAuth } from "../auth/panelAuth";
import { AuthError } from "../auth/types";
import { publicProcedure, router } from "../trpc";
import { type Actor } from "../contract/actors";
import type { AgentClient } from "./agentClient";
import { toPanelError, type AgentErrorContext } from "./agentErrors";
import type { PanelContext, PanelRequest } from "./context";
import type { SessionStreams } from "./sessionStreams";
import { createUsersRouter } from "./usersRouter";

export interface PanelRouterDeps {
  agent: AgentClient;
  auth: PanelAuth;
  demo: boolean;
  /** Aborted on shutdown: open browser streams end with a retryable error. */
  shutdown: AbortSignal;
  /** The agent's host name (audit rows and the action guard are keyed by it). */
  agentHost(): Promise<string>;
  /** Best current guess of the host name without asking the agent (for refusal records). */
  knownHost(): string | null;
  /** Result of a job that already ended, if the panel's agent watcher saw it. */
  finishedOutcome(host: string, jobId: number): string | undefined;
  streams: SessionStreams;
  agentErrors: AgentErrorContext;
  /** Limits how many refusals one caller can write into the audit log. */
  refusalAudit: RefusalAuditLimiter;
}

/**
 * Refusals are audited, but a caller repeating a refused request must not be able to flood the
 * log: at most `perMinute` refusal rows per caller (user, or address when unknown) a minute.
 */
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

const reasonSchema = z.string().trim().max(500, "reason is longer than 500 characters").optional();
const actionInput = z
  .object({
    name: unitNameSchema,
    reason: reasonSchema,
    /** The operator saw "X restarted this N s ago" and wants to act anyway. */
    confirmed: z.boolean().optional(),
  })
  .strict();
// event ids are short; journal cursors (systemd's "s=…;i=…;b=…;m=…;t=…;x=…") are ~150 characters
const lastEventIdSchema = z.string().max(1000).nullish();
const usernameInput = z.string().max(256);
const passwordInput = z.string().max(2048);

const UNIT_PROCEDURES = {
  start: "start",
  stop: "stop",
  restart: "restart",
  "reset-failed": "resetFailed",
  kill: "kill",
} as const satisfies Record<UnitAction, string>;

/** User-management mutations → their audit action names (as usersRouter records them). */
const USER_PROCEDURES: Record<string, string> = {
  create: "user.add",
  update: "user.update",
  // refused before its input was read, enable and disable look the same
  setDisabled: "user.set-disabled",
  resetPassword: "user.passwd",
};

/**
 * Procedure path → audit action name ("units.resetFailed" → "reset-failed", "users.create" →
 * "user.add"). Reads keep their path: the handler audits early refusals of mutations only.
 */
export function auditActionForPath(path: string): string {
  const m = /^units\.(\w+)$/.exec(path);
  if (m) {
    const entry = Object.entries(UNIT_PROCEDURES).find(([, proc]) => proc === m[1]);
    if (entry) return entry[0];
  }
  const u = /^users\.(\w+)$/.exec(path);
  if (u && Object.hasOwn(USER_PROCEDURES, u[1]!)) return USER_PROCEDURES[u[1]!]!;
  return path;
}

function requestOf(ctx: { panelRequest?: PanelRequest }): PanelRequest {
  if (!ctx.panelRequest) throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: "panel context missing" });
  return ctx.panelRequest;
}

/** A sentence for the audit log from any error (zod issues flattened like the error formatter does). */
export function errorDetail(error: TRPCError): string {
  if (error.cause instanceof ZodError) {
    return error.cause.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ` : "") + i.message).join("; ");
  }
  return error.message;
}

/** Errors already written to the audit log (so the endpoint's error hook does not write them twice). */
export const auditedErrors = new WeakSet<TRPCError>();

const REFUSAL_CODES = new Set<TRPCError["code"]>(["UNAUTHORIZED", "FORBIDDEN", "BAD_REQUEST", "CONFLICT", "PARSE_ERROR", "TOO_MANY_REQUESTS", "NOT_FOUND"]);

export function createPanelRouter(deps: PanelRouterDeps) {
  const { agent, auth } = deps;
  const ctxFor = (actor: Actor) => ({ context: { actor } });
  const call = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw toPanelError(err, deps.agentErrors);
    }
  };
  const decide = (actor: Actor | null, action: Action, unit?: string) => can(actor, action, unit, auth.authorization);

  /** Every procedure: the per-request state, typed. */
  const panelProcedure = publicProcedure.use(({ ctx, next }) => next({ ctx: { panelRequest: requestOf(ctx as Partial<PanelContext>) } }));

  const requireActor = panelProcedure.use(({ ctx, next }) => {
    if (!ctx.actor) throw new TRPCError({ code: "UNAUTHORIZED", message: `Not signed in: ${ctx.panelRequest.authRefusal ?? "sign in first"}.` });
    return next({ ctx: { actor: ctx.actor } });
  });

  /** Anyone signed in: viewers see everything the agent shows. */
  const viewProcedure = requireActor;

  function recordRefusal(
    req: PanelRequest,
    actor: Actor | null,
    entry: { action: string; unit: string | null; reason: string | null; outcome: string; detail: string; host?: string | null },
  ): void {
    const key = actor ? `user:${actor.user.toLowerCase()}` : `addr:${req.sourceAddr ?? "unknown"}`;
    if (!deps.refusalAudit.allow(key)) return;
    auth.audit.recordAudit({
      user: actor?.user ?? null,
      role: actor?.role ?? null,
      sourceAddr: req.sourceAddr,
      host: entry.host === undefined ? deps.knownHost() : entry.host,
      unit: entry.unit,
      action: entry.action,
      reason: entry.reason,
      outcome: entry.outcome,
      detail: entry.detail,
    });
  }

  function unitAction(action: UnitAction) {
    const procedure = UNIT_PROCEDURES[action];
    return (
      panelProcedure
        // Outermost: whatever refuses this call below (no session, a bad unit name, no
        // permission, the action guard, the agent) is audited here with the raw input as sent.
        .use(async ({ ctx, next, getRawInput }) => {
          const state = { recorded: false };
          const result = await next({ ctx: { auditState: state } });
          if (!result.ok && state.recorded) auditedErrors.add(result.error);
          if (!result.ok && !state.recorded) {
            auditedErrors.add(result.error);
            const raw = (await getRawInput().catch(() => undefined)) as { name?: unknown; reason?: unknown } | undefined;
            const rawName = raw && typeof raw === "object" ? raw.name : undefined;
            const rawReason = raw && typeof raw === "object" ? raw.reason : undefined;
            recordRefusal(ctx.panelRequest, ctx.actor, {
              action,
              unit: typeof rawName === "string" ? rawName : rawName === undefined ? null : (JSON.stringify(rawName) ?? null),
              reason: typeof rawReason === "string" ? rawReason : null,
              outcome: REFUSAL_CODES.has(result.error.code) ? "refused" : "error",
              detail: errorDetail(result.error),
            });
          }
          return result;
        })
        .use(({ ctx, next }) => {
          if (!ctx.actor) throw new TRPCError({ code: "UNAUTHORIZED", message: `Not signed in: ${ctx.panelRequest.authRefusal ?? "sign in first"}.` });
          return next({ ctx: { actor: ctx.actor } });
        })
        .input(actionInput)
        .mutation(async ({ input, ctx }) => {
          const { actor, panelRequest: req } = ctx;
          const decision = decide(actor, action, input.name);
          if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
          const host = await call(() => deps.agentHost());
          const base = {
            user: actor.user,
            role: actor.role,
            sourceAddr: req.sourceAddr,
            host,
            unit: input.name,
            action,
            reason: input.reason || null,
          };
          const claim = auth.guard.claim({ host, unit: input.name, action, user: actor.user, confirmed: input.confirmed === true });
          if (!claim.ok) {
            auth.audit.recordAudit({ ...base, outcome: "refused", detail: `confirmation required: ${claim.message}` });
            ctx.auditState.recorded = true;
            // UI: show the message and offer to repeat with { confirmed: true }.
            throw new TRPCError({ code: "CONFLICT", message: `Confirmation required: ${claim.message}.` });
          }
          const auditId = auth.audit.recordAudit({ ...base, outcome: "pending", detail: input.confirmed ? "confirmed after a recent action" : null });
          ctx.auditState.recorded = true;
          try {
            const r = await call(() => agent.units[procedure].mutate({ name: input.name, reason: input.reason }, ctxFor(actor)));
            const outcome = r.jobId === null ? "done" : (deps.finishedOutcome(host, r.jobId) ?? "pending");
            auth.audit.updateAuditOutcome(auditId, outcome, { jobId: r.jobId });
            return { ...r, auditId };
          } catch (err) {
            claim.release();
            const e = toPanelError(err, deps.agentErrors);
            auth.audit.updateAuditOutcome(auditId, e.code === "FORBIDDEN" ? "refused" : "error", { detail: e.message });
            throw e;
          }
        })
    );
  }

  /**
   * A browser stream bound to the caller's session: it ends (UNAUTHORIZED) when the session
   * ends, and with a retryable error when the panel shuts down.
   */
  function streamSignal(ctx: { panelRequest: PanelRequest }, signal: AbortSignal | undefined) {
    const base = signal ? AbortSignal.any([signal, deps.shutdown]) : deps.shutdown;
    const req = ctx.panelRequest;
    const stillValid = (): boolean => {
      if (deps.demo) return true;
      if (req.sessionId) return auth.sessions.validateSession(req.sessionId).ok;
      if (req.principal?.via === "proxy") return !(auth.users.getUser(req.principal.username)?.disabled ?? false);
      return false;
    };
    return deps.streams.bind(base, stillValid);
  }

  function streamEnded(bound: { ended(): boolean }): never | void {
    if (bound.ended()) throw new TRPCError({ code: "UNAUTHORIZED", message: "Your session has ended; sign in again." });
    if (deps.shutdown.aborted) throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: "panel is restarting" });
  }

  const publicUser = (p: { username: string; role: string; unitPatterns: readonly string[] }, via: string) => ({
    name: p.username,
    role: p.role as Actor["role"],
    unitPatterns: [...p.unitPatterns],
    via,
  });

  const session = router({
    /** Who am I? Public: null user when signed out, with why and whether first-run setup is pending. */
    me: panelProcedure.query(({ ctx }) => {
      const req = ctx.panelRequest;
      if (deps.demo)
        return { user: publicUser({ username: "demo", role: "admin", unitPatterns: [] }, "demo"), demo: true, setupPending: false, signedOutReason: null };
      if (!ctx.actor || !req.principal) {
        return { user: null, demo: false, setupPending: auth.users.setupPending() || auth.users.countActiveAdmins() === 0, signedOutReason: req.authRefusal };
      }
      return { user: publicUser(req.principal, req.principal.via), demo: false, setupPending: false, signedOutReason: null };
    }),

    login: panelProcedure.input(z.object({ username: usernameInput, password: passwordInput }).strict()).mutation(async ({ input, ctx }) => {
      const req = ctx.panelRequest;
      if (deps.demo) throw new TRPCError({ code: "BAD_REQUEST", message: "Demo mode has no sign-in: everyone is the demo admin." });
      const result = await auth.login({ ...input, secure: req.secure, sourceAddr: req.sourceAddr, userAgent: req.userAgent });
      if (!result.ok) {
        if (result.reason === "rate-limited") {
          const seconds = Math.max(1, Math.ceil((result.retryAfterMs ?? 60_000) / 1000));
          req.resHeaders.set("Retry-After", String(seconds));
          throw new TRPCError({ code: "TOO_MANY_REQUESTS", message: `${result.message[0]!.toUpperCase()}${result.message.slice(1)}.` });
        }
        throw new TRPCError({ code: "UNAUTHORIZED", message: "Invalid username or password." });
      }
      // A browser signing in again drops its previous session rather than leaving it valid.
      if (req.sessionId) auth.sessions.endSession(req.sessionId);
      req.resHeaders.append("Set-Cookie", result.setCookie);
      return { user: publicUser(result.user, "session") };
    }),

    logout: panelProcedure.mutation(({ ctx }) => {
      const req = ctx.panelRequest;
      if (deps.demo) return { ended: false };
      const { ended, setCookie } = auth.logout({ sessionId: req.sessionId, secure: req.secure, sourceAddr: req.sourceAddr, userAgent: req.userAgent });
      req.resHeaders.append("Set-Cookie", setCookie);
      deps.streams.changed();
      return { ended };
    }),

    changePassword: requireActor.input(z.object({ currentPassword: passwordInput, newPassword: passwordInput }).strict()).mutation(async ({ input, ctx }) => {
      const req = ctx.panelRequest;
      const principal = req.principal;
      if (deps.demo || !principal || principal.userId === null || !req.sessionId) {
        throw new TRPCError({ code: "BAD_REQUEST", message: "This identity has no panel password to change (demo mode or reverse-proxy sign-in)." });
      }
      // The current password is a credential: guessing it is throttled like sign-in.
      const attempt = auth.limiter.attempt(principal.username, req.sourceAddr);
      if (!attempt.allowed) {
        throw new TRPCError({
          code: "TOO_MANY_REQUESTS",
          message: `Too many wrong passwords; try again in ${Math.max(1, Math.ceil(attempt.retryAfterMs / 60_000))} min.`,
        });
      }
      try {
        const result = await auth.changeOwnPassword({
          userId: principal.userId,
          currentPassword: input.currentPassword,
          newPassword: input.newPassword,
          secure: req.secure,
          sourceAddr: req.sourceAddr,
          userAgent: req.userAgent,
        });
        attempt.succeeded();
        req.resHeaders.append("Set-Cookie", result.setCookie);
        deps.streams.changed(); // other browsers' streams end now
        return { ok: true as const };
      } catch (err) {
        if (err instanceof AuthError) throw new TRPCError({ code: "BAD_REQUEST", message: err.message });
        throw err;
      }
    }),
  });

  const setup = router({
    /** First-run: the token from the setup link creates the first admin, who is then signed in. */
    complete: panelProcedure
      .input(z.object({ token: z.string().max(200), username: usernameInput, password: passwordInput }).strict())
      .mutation(async ({ input, ctx }) => {
        const req = ctx.panelRequest;
        if (deps.demo) throw new TRPCError({ code: "BAD_REQUEST", message: "Demo mode needs no setup." });
        try {
          const result = await auth.completeSetup({ ...input, secure: req.secure, sourceAddr: req.sourceAddr, userAgent: req.userAgent });
          req.resHeaders.append("Set-Cookie", result.setCookie);
          return { user: publicUser(result.user, "session") };
        } catch (err) {
          if (err instanceof AuthError) {
            throw new TRPCError({
              code: err.code === "invalid-setup-token" || err.code === "admin-exists" ? "FORBIDDEN" : "BAD_REQUEST",
              message: err.message,
            });
          }
          throw err;
        }
      }),
  });

  const host = router({
    status: viewProcedure.query(({ ctx }) => call(() => agent.host.status.query(undefined, ctxFor(ctx.actor)))),
  });

  const units = router({
    list: viewProcedure.query(({ ctx }) => call(() => agent.units.list.query(undefined, ctxFor(ctx.actor)))),
    get: viewProcedure.input(z.object({ name: unitNameSchema }).strict()).query(async ({ input, ctx }) => {
      const detail = await call(() => agent.units.get.query(input, ctxFor(ctx.actor)));
      const known = deps.knownHost();
      const recent = known ? auth.guard.peek(known, input.name) : null;
      return {
        detail,
        permissions: unitPermissions(ctx.actor, input.name, auth.authorization),
        /** A restart/stop/kill within the guard window: a repeat needs `confirmed: true`. */
        recentAction: recent ? { user: recent.user, action: recent.action, atMs: recent.at } : null,
      };
    }),
    start: unitAction("start"),
    stop: unitAction("stop"),
    restart: unitAction("restart"),
    resetFailed: unitAction("reset-failed"),
    kill: unitAction("kill"),
    diagnose: viewProcedure
      .input(z.object({ name: unitNameSchema }).strict())
      .query(({ input, ctx }) => call(() => agent.units.diagnose.query(input, ctxFor(ctx.actor)))),
    timeline: viewProcedure
      .input(z.object({ name: unitNameSchema, sinceMs: z.number().int().nonnegative().optional() }).strict())
      .query(({ input, ctx }) => call(() => agent.units.timeline.query(input, ctxFor(ctx.actor)))),
    journal: viewProcedure
      .input(z.object({ name: unitNameSchema, lines: z.number().int().min(1).max(2000).default(200) }).strict())
      .query(({ input, ctx }) => call(() => agent.units.journal.query(input, ctxFor(ctx.actor)))),
    followJournal: viewProcedure.input(z.object({ name: unitNameSchema, lastEventId: lastEventIdSchema }).strict()).subscription(async function* ({
      input,
      ctx,
      signal,
    }) {
      const bound = streamSignal(ctx, signal);
      try {
        const stream = bridge<JournalEntry>((h) => agent.units.followJournal.subscribe(input, { ...h, ...ctxFor(ctx.actor) }), bound.signal, deps.agentErrors);
        for await (const { id, data } of stream) yield tracked(id, data);
        streamEnded(bound);
      } finally {
        bound.dispose();
      }
    }),
  });

  const gpus = router({
    list: viewProcedure.query(({ ctx }) => call(() => agent.gpus.list.query(undefined, ctxFor(ctx.actor)))),
    history: viewProcedure
      .input(z.object({ sinceMs: z.number().int().nonnegative(), uuid: z.string().max(100).optional() }).strict())
      .query(({ input, ctx }) => call(() => agent.gpus.history.query(input, ctxFor(ctx.actor)))),
  });

  const events = router({
    watch: viewProcedure.input(z.object({ lastEventId: lastEventIdSchema }).strict().optional()).subscription(async function* ({ input, ctx, signal }) {
      const bound = streamSignal(ctx, signal);
      try {
        const stream = bridge<AgentEvent>(
          (h) => agent.events.watch.subscribe({ lastEventId: input?.lastEventId ?? null }, { ...h, ...ctxFor(ctx.actor) }),
          bound.signal,
          deps.agentErrors,
        );
        for await (const { id, data } of stream) yield tracked(id, data);
        streamEnded(bound);
      } finally {
        bound.dispose();
      }
    }),
  });

  const auditFilter = z
    .object({
      user: z.string().trim().min(1).max(128).optional(),
      unit: z.string().trim().min(1).max(300).optional(),
      action: z.string().trim().min(1).max(64).optional(),
      outcome: z.string().trim().min(1).max(64).optional(),
      from: z.number().int().nonnegative().optional(),
      to: z.number().int().nonnegative().optional(),
      /** Keyset paging: rows older than this id (the previous page's `nextCursor`). */
      cursor: z.number().int().positive().nullish(),
      /** Sent by infinite queries; pages only go back in time. */
      direction: z.enum(["forward", "backward"]).optional(),
      limit: z.number().int().min(1).max(500).default(100),
    })
    .strict();

  const audit = router({
    /** The audit log, newest first, keyset-paged (`cursor` = `nextCursor` of the previous page). */
    list: viewProcedure.input(auditFilter).query(({ input, ctx }) => {
      const decision = decide(ctx.actor, "audit.view");
      if (!decision.allowed) {
        recordRefusal(ctx.panelRequest, ctx.actor, { action: "audit.view", unit: null, reason: null, outcome: "refused", detail: decision.reason, host: null });
        throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
      }
      const { cursor, limit, direction: _direction, ...filters } = input;
      const rows = auth.audit.queryAudit({ ...filters, before: cursor ?? undefined, limit: limit + 1 });
      const more = rows.length > limit;
      const page = more ? rows.slice(0, limit) : rows;
      return { rows: page, nextCursor: more ? page[page.length - 1]!.id : null };
    }),
  });

  return router({ session, setup, host, units, gpus, events, audit, users: createUsersRouter({ ...deps, recordRefusal, auditedErrors, errorDetail }) });
}

/**
 * Bridge a client subscription into an async generator that ends when `signal` aborts. An agent
 * stream that cannot (re)connect ends the browser stream with a retryable error, so the browser
 * shows "reconnecting" instead of a silent stall.
 */
async function* bridge<T>(
  subscribe: (handlers: {
    onData: (d: { id: string; data: T }) => void;
    onError: (e: unknown) => void;
    onComplete: () => void;
    onConnectionStateChange: (s: { state: string; error: unknown }) => void;
  }) => { unsubscribe(): void },
  signal: AbortSignal,
  where: AgentErrorContext,
): AsyncGenerator<{ id: string; data: T }> {
  const queue: { id: string; data: T }[] = [];
  let failure: unknown = null;
  let done = false;
  let wake: (() => void) | null = null;
  const sub = subscribe({
    onData: (d) => {
      queue.push(d);
      wake?.();
    },
    onError: (e) => {
      failure = e;
      wake?.();
    },
    onComplete: () => {
      done = true;
      wake?.();
    },
    onConnectionStateChange: (s) => {
      if (s.state === "connecting" && s.error) {
        failure ??= s.error;
        wake?.();
      }
    },
  });
  const onAbort = () => wake?.();
  signal.addEventListener("abort", onAbort);
  try {
    while (!signal.aborted) {
      if (queue.length > 0) {
        yield queue.shift()!;
        continue;
      }
      if (failure) {
        const e = toPanelError(failure, where);
        // Anything but an authorization or input problem is worth retrying from the browser.
        if (e.code === "UNAUTHORIZED" || e.code === "FORBIDDEN" || e.code === "BAD_REQUEST" || e.code === "NOT_FOUND") throw e;
        throw new TRPCError({ code: e.code === "BAD_GATEWAY" ? "BAD_GATEWAY" : "SERVICE_UNAVAILABLE", message: e.message });
      }
      if (done) throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: "the agent closed the stream" });
      await new Promise<void>((r) => (wake = r));
      wake = null;
    }
  } finally {
    sub.unsubscribe();
    signal.removeEventListener("abort", onAbort);
  }
}

export type PanelRouter = ReturnType<typeof createPanelRouter>;
export { can };
