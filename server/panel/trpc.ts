/**
 * The panel's tRPC core, in three parts (model: create-t3-app's `server/api/trpc.ts`):
 * 1. the context: the named services a procedure may use, and who is asking from where;
 * 2. the procedures every router builds on: `panelProcedure` (any caller), `signedInProcedure`,
 *    and `audited(…)`, the one middleware that writes a refused call to the audit log, once;
 * 3. helpers for procedures: calling the agent, and live streams bound to the caller's session.
 * Routers (./routers/, one file per area) import only this file and the services' types; the root
 * router (./router.ts) only merges them.
 */
import { TRPCError } from "@trpc/server";
import { ZodError } from "zod";
import type { PanelAuth } from "../auth/panelAuth";
import type { Decision, Subject } from "../auth/authorize";
import type { OidcSignIn } from "../auth/oidc/signIn";
import type { Principal } from "../auth/types";
import type { Actor } from "../contract/actors";
import { zodIssuesMessage } from "../contract/errors";
import { linkSignals } from "../streams/signals";
import { publicProcedure, type Context } from "../trpc";
import type { AgentClient } from "./agentClient";
import { toPanelError } from "./agentErrors";
import type { AuditSettler } from "./fleet/auditSettler";
import type { Fleet } from "./fleet/fleet";
import type { HostLink } from "./fleet/hostLink";
import type { HostStore } from "./fleet/hostStore";
import type { PanelEventBus } from "../store/eventBus";
import type { LazyStore } from "../store/lazyStore";
import { isDatabaseUnreachable, unavailableSentence } from "../store/unavailable";
import type { AlertsService } from "../alerts/service";
import type { PushService } from "../push/service";
import type { StatusPageService } from "../statusPage/statusService";
import type { QueryRateLimiter } from "./queryLimit";
import { REFUSAL_CODES, type RefusalRecorder } from "./refusals";
import { StreamLimitError, type SessionStreams } from "./sessionStreams";

// --- 1. Context -----------------------------------------------------------------------

/** Per-request state beyond who is asking. */
export interface PanelRequest {
  sourceAddr: string | null;
  userAgent: string | null;
  /** Cookies carry Secure and the `__Host-` prefix. */
  secure: boolean;
  /** Response headers of this HTTP request (Set-Cookie, Retry-After). */
  resHeaders: Headers;
  /** null in demo mode and when nobody is signed in. */
  principal: Principal | null;
  /** The valid session behind `principal` (null for proxy identities and demo). */
  sessionId: string | null;
  /** Why the request is not authenticated, as a sentence for the UI; null when it is. */
  authRefusal: string | null;
  /** The database could not be reached to authenticate this request: the sentence saying so (SERVICE_UNAVAILABLE). */
  unavailable: string | null;
  /**
   * A session whose role must sign in with two factors (panel.require_2fa_for) and who has not set
   * it up: who they are, for enrolment and sign-out only. `principal` is null meanwhile, so every
   * other procedure refuses them.
   */
  twoFactorEnrolment?: Principal | null;
  /** Procedures of this request whose refusals the `audited` middleware records (the endpoint then does not). */
  auditedCalls: Set<string>;
}

/** The services a procedure may use; built once per panel process (./instance.ts). */
export interface PanelServices {
  /** Demo mode: no sign-in, everyone is the demo admin. */
  demo: boolean;
  auth: PanelAuth;
  /** One live stream per agent, fanned out to browsers; each host's agent client. */
  fleet: Fleet;
  /** Hosts added on the Hosts page. */
  hostStore: HostStore;
  /** Results of jobs, for audit rows. */
  settler: AuditSettler;
  /** The panel database through Kysely (SQLite or PostgreSQL), opened on first use. */
  store: LazyStore;
  /** Panel events from every replica (audit rows, session and host changes), in id order. */
  events: PanelEventBus;
  streams: SessionStreams;
  refusals: RefusalRecorder;
  /** Expensive queries per user a minute (GPUDECK_QUERIES_PER_MINUTE). */
  queries: QueryRateLimiter;
  /** Rules → alerts → the outbox → channels; silences (server/alerts/). */
  alerts: AlertsService;
  /** Web Push to the browsers people subscribed (server/push/). */
  push: PushService;
  /** Single sign-on through the OIDC provider; null when not configured. */
  oidc: OidcSignIn | null;
  /** The stakeholders' status page: its settings and data (server/statusPage/). */
  statusPage: StatusPageService;
  /** Aborted on shutdown: open browser streams end with a retryable error. */
  shutdown: AbortSignal;
}

export type PanelContext = Context & { panelRequest: PanelRequest; services: PanelServices };

// --- 2. Procedures --------------------------------------------------------------------

/**
 * Any caller, signed in or not, with the panel's context typed. Whatever fails below because the
 * database is away becomes SERVICE_UNAVAILABLE with a sentence saying so (a replica that lost
 * PostgreSQL refuses changes clearly rather than with "internal error").
 */
export const panelProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const { panelRequest, services } = ctx as Partial<PanelContext>;
  if (!panelRequest || !services) throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: "panel context missing" });
  const result = await next({ ctx: { panelRequest, services } });
  if (!result.ok && result.error.code !== "SERVICE_UNAVAILABLE" && isDatabaseUnreachable(result.error)) {
    throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: unavailableSentence(services.store.dialect, result.error), cause: result.error });
  }
  return result;
});

export function notSignedIn(req: PanelRequest): TRPCError {
  if (req.unavailable) return new TRPCError({ code: "SERVICE_UNAVAILABLE", message: req.unavailable });
  return new TRPCError({ code: "UNAUTHORIZED", message: `Not signed in: ${req.authRefusal ?? "sign in first"}.` });
}

/** A signed-in caller (or demo mode's demo admin). */
export const signedInProcedure = panelProcedure.use(({ ctx, next }) => {
  if (!ctx.actor) throw notSignedIn(ctx.panelRequest);
  return next({ ctx: { actor: ctx.actor } });
});

/** A signed-in caller's expensive query (journal, diagnosis, history): counted against their GPUDECK_QUERIES_PER_MINUTE. */
export const expensiveQueryProcedure = signedInProcedure.use(async ({ ctx, next }) => {
  if (!ctx.services.demo) await ctx.services.queries.take(ctx.actor.user, ctx.panelRequest.resHeaders);
  return next();
});

/** What an audit row of a refused call says; derived from the raw input as sent (never trusted, never a password). */
export interface AuditedCall {
  action: string;
  unit?: string | null;
  reason?: string | null;
  /** Put before the error text in `detail` (e.g. "user=alice: "). */
  detailPrefix?: string;
  /** undefined = the host the panel knows best right now */
  host?: string | null;
}

/** A sentence for the audit log from any error (zod issues flattened as the error formatter does). */
export function errorDetail(error: TRPCError): string {
  return error.cause instanceof ZodError ? zodIssuesMessage(error.cause) : error.message;
}

/**
 * Outermost middleware of every mutation that changes something: whatever refuses the call below
 * it (no session, input that fails validation, no permission, the action guard, the agent) is
 * written to the audit log here, exactly once. A procedure that writes its own row for the call
 * (an action that reached the agent) sets `ctx.audit.recorded`, and nothing more is written.
 */
export function audited(describe: (raw: Record<string, unknown>) => AuditedCall) {
  return panelProcedure.use(async ({ ctx, next, getRawInput, path }) => {
    ctx.panelRequest.auditedCalls.add(path);
    const audit = { recorded: false };
    const result = await next({ ctx: { audit } });
    if (!result.ok && !audit.recorded) {
      const rawInput: unknown = await getRawInput().catch(() => undefined);
      const raw = rawInput && typeof rawInput === "object" && !Array.isArray(rawInput) ? (rawInput as Record<string, unknown>) : {};
      const call = describe(raw);
      try {
        await ctx.services.refusals.record(ctx.panelRequest, ctx.actor, {
          action: call.action,
          unit: call.unit ?? null,
          reason: call.reason ?? null,
          outcome: REFUSAL_CODES.has(result.error.code) ? "refused" : "error",
          detail: `${call.detailPrefix ?? ""}${errorDetail(result.error)}`,
          host: call.host,
        });
      } catch (err) {
        // the database is away (that is what the caller is told); the refusal cannot be stored
        console.error(`[panel] could not audit a refused call: ${(err as Error).message}`);
      }
    }
    return result;
  });
}

// --- 3. Helpers -----------------------------------------------------------------------

/** The host of that name, or NOT_FOUND naming the hosts there are. */
export function hostLink(services: PanelServices, host: string): HostLink {
  const link = services.fleet.get(host);
  if (link) return link;
  const names = services.fleet.all().map((l) => l.name);
  throw new TRPCError({ code: "NOT_FOUND", message: `There is no host named ${host} in this panel (hosts: ${names.length ? names.join(", ") : "none"}).` });
}

/** Call a host's agent; its failures become errors people can act on (which agent, what to check). */
export async function callHost<T>(services: PanelServices, host: string, fn: (agent: AgentClient, link: HostLink) => Promise<T>): Promise<T> {
  const link = hostLink(services, host);
  try {
    return await fn(link.client, link);
  } catch (err) {
    throw toPanelError(err, link.errorContext);
  }
}

/** The acting user, forwarded to the agent with a call. */
export const asActor = (actor: Actor) => ({ context: { actor } });

export interface SessionBoundStream {
  signal: AbortSignal;
  /** Throws the error the browser should get when the stream ended for the session or a shutdown. */
  throwIfEnded(): void;
  dispose(): void;
}

/** What a stream needs of the caller beyond a valid session (e.g. journal access), checked again when their account changes. */
export type StreamPermission = (subject: Subject) => Decision;

/**
 * A browser stream bound to the caller's session: it ends (UNAUTHORIZED) when the session ends,
 * (FORBIDDEN) when `permission` no longer allows the caller after a change of their role or units
 * (on any replica: a `sessions` panel event makes open streams re-check at once; an API token
 * is checked with its owner's rights as they are now), and with a
 * retryable error when the panel shuts down.
 */
export function sessionBoundStream(
  ctx: { panelRequest: PanelRequest; services: PanelServices },
  signal: AbortSignal | undefined,
  permission?: StreamPermission,
): SessionBoundStream {
  const { services, panelRequest: req } = ctx;
  let forbidden: string | null = null;
  const allowed = (subject: Subject | null): boolean => {
    if (!permission || !subject) return true;
    const decision = permission(subject);
    if (!decision.allowed) forbidden = decision.reason;
    return decision.allowed;
  };
  const stillValid = async (): Promise<boolean> => {
    if (services.demo) return true;
    // a stream staying open is not the person doing something: it must not renew the idle timeout
    if (req.sessionId) {
      const check = await services.auth.sessions.validateSession(req.sessionId, { touch: false });
      return check.ok && allowed(check.user);
    }
    if (req.principal?.token) {
      // the token's rights now: its owner's role may have changed since the stream began
      const now = await services.auth.tokens.recheck(req.principal.token.id);
      return now !== null && allowed(now);
    }
    if (req.principal?.via === "proxy") {
      const user = await services.auth.users.getUser(req.principal.username);
      return !(user?.disabled ?? false) && allowed(user ?? req.principal);
    }
    return false;
  };
  const base = linkSignals(signal, services.shutdown);
  // streams are capped per session (a proxy identity counts as one), per token, per user and per panel; demo mode shares one identity
  const token = req.principal?.token;
  const owner = services.demo
    ? null
    : req.sessionId
      ? `session:${req.sessionId}`
      : token
        ? `token:${token.id}`
        : req.principal
          ? `user:${req.principal.username}`
          : null;
  let bound: ReturnType<SessionStreams["bind"]>;
  try {
    const user = req.principal && !services.demo ? { userId: req.principal.userId, username: req.principal.username } : null;
    bound = services.streams.bind(base.signal, stillValid, owner, user);
  } catch (err) {
    base.dispose();
    if (err instanceof StreamLimitError) throw new TRPCError({ code: "TOO_MANY_REQUESTS", message: err.message });
    throw err;
  }
  // a token's stream re-checks when the token expires (it ends then)
  const check = () => services.streams.changed({ userId: req.principal?.userId ?? null, username: req.principal?.username ?? null });
  const expiry = token ? setTimeout(check, Math.min(2 ** 31 - 1, Math.max(0, token.expiresAt - Date.now()) + 50)) : undefined;
  expiry?.unref?.();
  return {
    signal: bound.signal,
    throwIfEnded() {
      if (bound.ended() && forbidden !== null) {
        throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed any more: ${forbidden as string} (your account was changed); this stream has ended.` });
      }
      if (bound.ended())
        throw new TRPCError({ code: "UNAUTHORIZED", message: token ? "This API token was revoked or expired." : "Your session has ended; sign in again." });
      if (services.shutdown.aborted) throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: "panel is restarting" });
    },
    dispose() {
      clearTimeout(expiry);
      bound.dispose();
      base.dispose();
    },
  };
}
