/**
 * One object the panel builds at start-up and puts in its tRPC context: the stores plus the
 * request-level flows (sign in, sign out, authenticate a request, first-run setup), each audited.
 * Framework-free: takes plain values (addresses, header maps), returns plain results and
 * Set-Cookie strings. Everything lives in the panel database it is given (the process's one
 * store: SQLite or PostgreSQL), so several replicas over one PostgreSQL agree.
 */
import type { EventNotifier } from "../store/events";
import { fixedStore, type StoreSource } from "../store/lazyStore";
import { openStore } from "../store/database";
import { ApiTokenStore } from "./apiTokens";
import { AuditStore } from "./audit";
import { can, DEFAULT_AUTHORIZATION_POLICY, type Action, type AuthorizationPolicy, type Decision, type Subject } from "./authorize";
import { RecentActionGuard, type RecentActionGuardOptions } from "./guard";
import { headerValues, PROXY_AUTH_DISABLED, ProxyAuthenticator, type HeaderSource, type ProxyAuthConfig } from "./proxy";
import { LoginRateLimiter, type LoginRateLimits, type RateLimitScope } from "./rateLimit";
import {
  clearSessionCookie,
  sessionCookie,
  sessionCookieName,
  sessionIdFromCookieHeader,
  SessionStore,
  type SessionInfo,
  type SessionPolicy,
  type SessionRefusal,
} from "./sessions";
import { AuthError, systemClock, type Clock, type Ms, type Principal, type User } from "./types";
import { UserStore } from "./users";
import { PASSWORD_MAX_LENGTH } from "./passwords";
import { TokenRateLimiter } from "./tokenRateLimit";
import { TotpStore } from "./totp";
import type { Role } from "../contract/actors";

export interface PanelAuthOptions {
  clock?: Clock;
  /** told after every write that published a panel event (the process's event bus) */
  events?: EventNotifier;
  sessions?: Partial<SessionPolicy>;
  rateLimits?: Partial<LoginRateLimits>;
  proxy?: ProxyAuthConfig;
  authorization?: Partial<AuthorizationPolicy>;
  guard?: Omit<RecentActionGuardOptions, "clock">;
  setupTokenTtlMs?: Ms;
  /**
   * Where refusals anyone can repeat without signing in go (a failed setup, an identity from the
   * trusted proxy that is refused): the panel's capped refusal recorder (../panel/refusals.ts), so
   * they cannot flood the audit log. Default: straight into the audit log.
   */
  refusals?: RefusalSink;
  /** API token requests per token per minute (GPUDECK_TOKEN_REQUESTS_PER_MINUTE). Default 600. */
  tokenRequestsPerMinute?: number;
  /** Roles whose local accounts must sign in with a second factor (panel.require_2fa_for); they are sent to enrol first. */
  requireTwoFactorFor?: readonly Role[];
}

/** A refusal of someone not signed in, for the audit log (through a cap). */
export interface AnonymousRefusalRow {
  action: "setup" | "proxy-login";
  sourceAddr: string | null;
  user: string | null;
  reason: string;
}
export type RefusalSink = (row: AnonymousRefusalRow) => Promise<void>;

/** Where a request came from, for sessions and the audit log. */
export interface RequestMeta {
  /** The TCP peer address (socket.remoteAddress), not a forwarded-for header. */
  sourceAddr: string | null;
  userAgent?: string | null;
}

export type LoginResult =
  | { ok: true; user: User; sessionId: string; session: SessionInfo; setCookie: string }
  /** The password was right; no session yet: the code comes next (./twoFactorLogin.ts) with this challenge. */
  | { ok: false; reason: "two-factor"; challenge: string; message: string }
  | {
      ok: false;
      reason: "invalid-credentials" | "rate-limited";
      /** Safe to show: never says whether the user exists. */
      message: string;
      retryAfterMs?: Ms;
    };

export type AuthenticateResult =
  | { ok: true; principal: Principal; via: "proxy" }
  | {
      ok: true;
      principal: Principal;
      via: "session";
      sessionId: string;
      session: SessionInfo;
      /** their role must sign in with two factors and they have none yet: only enrolment (and sign-out) until they do */
      enrolTwoFactor: boolean;
    }
  | {
      ok: false;
      reason: SessionRefusal | "proxy-refused";
      message: string;
      /** A cookie was sent but is no good: send `clearSessionCookie()` back. */
      clearCookie: boolean;
    };

const INVALID_CREDENTIALS = "invalid username or password";

const SESSION_MESSAGES: Record<SessionRefusal, string> = {
  missing: "sign in first",
  malformed: "sign in first",
  unknown: "your session has ended; sign in again",
  "idle-timeout": "your session timed out; sign in again",
  expired: "your session expired; sign in again",
  "user-disabled": "this account is disabled",
  "password-changed": "the password was changed; sign in again",
};

export class PanelAuth {
  readonly store: StoreSource;
  readonly users: UserStore;
  readonly sessions: SessionStore;
  readonly audit: AuditStore;
  readonly tokens: ApiTokenStore;
  readonly tokenLimiter: TokenRateLimiter;
  readonly limiter: LoginRateLimiter;
  readonly guard: RecentActionGuard;
  readonly proxy: ProxyAuthenticator;
  readonly authorization: Readonly<AuthorizationPolicy>;
  readonly twoFactor: TotpStore;
  readonly requireTwoFactorFor: readonly Role[];
  private readonly clock: Clock;
  private readonly refusals: RefusalSink;

  constructor(store: StoreSource, options: PanelAuthOptions = {}) {
    this.store = store;
    this.clock = options.clock ?? systemClock;
    this.refusals =
      options.refusals ??
      (async (r) => {
        await this.audit.recordAudit({
          user: r.user,
          role: null,
          sourceAddr: r.sourceAddr,
          host: null,
          unit: null,
          action: r.action,
          reason: r.reason,
          outcome: "refused",
        });
      });
    const { clock, events } = { clock: this.clock, events: options.events };
    this.users = new UserStore(store, { clock, events, setupTokenTtlMs: options.setupTokenTtlMs });
    this.sessions = new SessionStore(store, { clock, events, policy: options.sessions });
    this.audit = new AuditStore(store, { clock, events });
    this.tokens = new ApiTokenStore(store, { clock, events });
    this.tokenLimiter = new TokenRateLimiter(store, options.tokenRequestsPerMinute);
    this.limiter = new LoginRateLimiter(store, { limits: options.rateLimits });
    // the database's clock unless one is injected (every replica then uses one clock)
    this.guard = new RecentActionGuard(store, { ...options.guard, clock: options.clock });
    this.proxy = new ProxyAuthenticator(options.proxy ?? PROXY_AUTH_DISABLED, this.users);
    this.authorization = Object.freeze({ ...DEFAULT_AUTHORIZATION_POLICY, ...options.authorization });
    this.twoFactor = new TotpStore(store, { clock });
    this.requireTwoFactorFor = Object.freeze([...(options.requireTwoFactorFor ?? [])]);
  }

  /** `can()` with this panel's authorization policy. */
  can(subject: Subject | null | undefined, action: Action, unit?: string | null): Decision {
    return can(subject, action, unit, this.authorization);
  }

  /** `Set-Cookie` for a session, persistent until its absolute lifetime ends. */
  cookieFor(sessionId: string, session: SessionInfo, options: { secure: boolean }): string {
    return sessionCookie(sessionId, { secure: options.secure, maxAgeMs: session.expiresAt - this.clock() });
  }

  /** A new session for `user`; when that ended their oldest (GPUDECK_SESSIONS_PER_USER), say so in the audit log. */
  async startSession(user: User, input: RequestMeta): Promise<{ id: string; session: SessionInfo }> {
    const { id, session, ended } = await this.sessions.createSession(user.id, input);
    if (ended > 0) {
      await this.audit.recordAudit({
        user: user.username,
        role: user.role,
        sourceAddr: input.sourceAddr,
        host: null,
        unit: null,
        action: "session.limit",
        reason: null,
        outcome: "ok",
        detail: `signed in with ${this.sessions.policy.maxPerUser} sessions open (GPUDECK_SESSIONS_PER_USER): the oldest ${ended === 1 ? "session was" : `${ended} sessions were`} ended`,
      });
    }
    return { id, session };
  }

  /** Sign in with a password: rate-limited, constant-ish time on failure, audited either way. */
  async login(input: { username: unknown; password: unknown; secure: boolean } & RequestMeta): Promise<LoginResult> {
    const username = typeof input.username === "string" ? input.username.trim().slice(0, 256) : "";
    const password = typeof input.password === "string" ? input.password.slice(0, PASSWORD_MAX_LENGTH * 2) : "";
    const attempt = await this.limiter.attempt(username, input.sourceAddr);
    if (!attempt.allowed) {
      if (this.shouldRecordThrottled("rate-limited", input.sourceAddr)) {
        await this.recordLogin(username, input, "refused", `rate limited (${attempt.scope})`);
      }
      return { ok: false, reason: "rate-limited", message: rateLimitMessage(attempt.scope, attempt.retryAfterMs), retryAfterMs: attempt.retryAfterMs };
    }
    const check = await this.users.verifyCredentials(username, password);
    if (!check.ok) {
      await this.recordLogin(username, input, "refused", check.reason);
      return { ok: false, reason: "invalid-credentials", message: INVALID_CREDENTIALS };
    }
    if (check.user.source === "local" && (await this.twoFactor.isEnabled(check.user.id))) {
      // no session until the code is right; this attempt's slot stays taken until then, so wrong
      // codes and passwords count together (./twoFactorLogin.ts)
      const challenge = await this.twoFactor.createChallenge(check.user.id);
      return { ok: false, reason: "two-factor", challenge, message: "enter the code from your authenticator app" };
    }
    await attempt.succeeded();
    const { id, session } = await this.startSession(check.user, input);
    await this.audit.recordAudit({
      user: check.user.username,
      role: check.user.role,
      sourceAddr: input.sourceAddr,
      host: null,
      unit: null,
      action: "login",
      reason: null,
      outcome: "ok",
    });
    return { ok: true, user: check.user, sessionId: id, session, setCookie: this.cookieFor(id, session, input) };
  }

  // Attempted names are recorded only when such a user exists: people type passwords into the
  // username field, and those must not end up in the audit log.
  private async recordLogin(username: string, meta: RequestMeta, outcome: string, reason: string): Promise<void> {
    const user = await this.users.getUser(username);
    await this.audit.recordAudit({
      user: user?.username ?? null,
      role: user?.role ?? null,
      sourceAddr: meta.sourceAddr,
      host: null,
      unit: null,
      action: "login",
      reason,
      outcome,
    });
  }

  /** Sign out: ends the session, returns the clearing Set-Cookie. */
  async logout(input: { sessionId: string | null; secure: boolean } & RequestMeta): Promise<{ ended: boolean; setCookie: string }> {
    const check = await this.sessions.validateSession(input.sessionId);
    const ended = await this.sessions.endSession(input.sessionId);
    if (check.ok) {
      await this.audit.recordAudit({
        user: check.user.username,
        role: check.user.role,
        sourceAddr: input.sourceAddr,
        host: null,
        unit: null,
        action: "logout",
        reason: null,
        outcome: "ok",
      });
    }
    return { ended, setCookie: clearSessionCookie(input) };
  }

  /**
   * Who is making this request? Trusted-proxy identity first (when enabled and the peer is a
   * trusted proxy), then the session cookie. An identity header from an untrusted peer is ignored
   * and recorded in the audit log. `touch: false`: the request is not the person doing something
   * (a background poll, a live stream), so it does not renew the session's idle timeout.
   */
  async authenticate(request: { remoteAddress: string | null; headers: HeaderSource; secure: boolean; touch?: boolean }): Promise<AuthenticateResult> {
    const fromProxy = await this.proxy.identify({ remoteAddress: request.remoteAddress, headers: request.headers });
    if (fromProxy.kind === "user") return { ok: true, principal: fromProxy.principal, via: "proxy" };
    if (fromProxy.kind === "refused") {
      // every request from the proxy carries the identity again: capped, or one user floods the log
      await this.refusals({ action: "proxy-login", sourceAddr: request.remoteAddress, user: fromProxy.username, reason: fromProxy.reason });
      return { ok: false, reason: "proxy-refused", message: fromProxy.reason, clearCookie: false };
    }
    if (fromProxy.kind === "ignored" && this.shouldRecordThrottled("proxy-header", request.remoteAddress)) {
      await this.audit.recordAudit({
        user: null,
        role: null,
        sourceAddr: request.remoteAddress,
        host: null,
        unit: null,
        action: "proxy-login",
        reason: fromProxy.reason,
        outcome: "refused",
      });
    }
    const cookieHeader = headerValues(request.headers, "cookie").join("; ");
    const sessionId = sessionIdFromCookieHeader(cookieHeader, request);
    const check = await this.sessions.validateSession(sessionId, { touch: request.touch });
    if (!check.ok) {
      const cookieName = sessionCookieName(request);
      const sentOurCookie = cookieHeader.split(";").some((part) => part.split("=")[0]!.trim() === cookieName);
      return { ok: false, reason: check.reason, message: SESSION_MESSAGES[check.reason], clearCookie: sentOurCookie };
    }
    const { user } = check;
    const enrolTwoFactor = user.source === "local" && this.requireTwoFactorFor.includes(user.role) && !(await this.twoFactor.isEnabled(user.id));
    return {
      ok: true,
      via: "session",
      sessionId: sessionId!,
      session: check.session,
      enrolTwoFactor,
      principal: { userId: user.id, username: user.username, role: user.role, unitPatterns: user.unitPatterns, via: "session" },
    };
  }

  // Refusals a client can repeat at will (an identity header on every request, a flood of
  // rate-limited logins) are recorded once a minute per kind and address, not once per request,
  // so they cannot flood the audit log.
  private readonly throttledSeen = new Map<string, Ms>();
  private shouldRecordThrottled(kind: string, address: string | null): boolean {
    const key = `${kind}\u0000${address ?? "unknown"}`;
    const now = this.clock();
    const last = this.throttledSeen.get(key);
    if (last !== undefined && now - last < 60_000) return false;
    if (this.throttledSeen.size >= 10_000) this.throttledSeen.clear();
    this.throttledSeen.set(key, now);
    return true;
  }

  /**
   * A signed-in user changes their password. Every session of theirs ends (other browsers are
   * signed out); a fresh session for this browser is returned with its Set-Cookie.
   */
  async changeOwnPassword(
    input: { userId: number; currentPassword: string; newPassword: string; secure: boolean } & RequestMeta,
  ): Promise<{ sessionId: string; session: SessionInfo; setCookie: string }> {
    let user: User;
    try {
      user = await this.users.changeOwnPassword(input.userId, input.currentPassword, input.newPassword);
    } catch (err) {
      const known = await this.users.getUserById(input.userId);
      await this.audit.recordAudit({
        user: known?.username ?? null,
        role: known?.role ?? null,
        sourceAddr: input.sourceAddr,
        host: null,
        unit: null,
        action: "user.passwd",
        reason: err instanceof AuthError ? err.message : "error",
        outcome: "refused",
      });
      throw err;
    }
    await this.audit.recordAudit({
      user: user.username,
      role: user.role,
      sourceAddr: input.sourceAddr,
      host: null,
      unit: null,
      action: "user.passwd",
      reason: null,
      outcome: "ok",
    });
    const { id, session } = await this.startSession(user, input);
    return { sessionId: id, session, setCookie: this.cookieFor(id, session, input) };
  }

  /** First-run setup from the setup link: creates the first admin and signs them in. */
  async completeSetup(
    input: { token: string; username: string; password: string; secure: boolean } & RequestMeta,
  ): Promise<{ user: User; sessionId: string; session: SessionInfo; setCookie: string }> {
    // Setup is over once an admin exists: refused without an audit row (anyone can send this, at will).
    if ((await this.users.countActiveAdmins()) > 0) {
      throw new AuthError("admin-exists", "setup is already done (an admin exists); sign in, or ask an admin for an account");
    }
    let user: User;
    try {
      user = await this.users.completeSetup(input.token, input.username, input.password);
    } catch (err) {
      await this.refusals({ action: "setup", sourceAddr: input.sourceAddr, user: null, reason: err instanceof AuthError ? err.message : "error" });
      throw err;
    }
    await this.audit.recordAudit({
      user: user.username,
      role: user.role,
      sourceAddr: input.sourceAddr,
      host: null,
      unit: null,
      action: "setup",
      reason: null,
      outcome: "ok",
    });
    const { id, session } = await this.startSession(user, input);
    return { user, sessionId: id, session, setCookie: this.cookieFor(id, session, input) };
  }
}

function rateLimitMessage(scope: RateLimitScope, retryAfterMs: Ms): string {
  const minutes = Math.max(1, Math.ceil(retryAfterMs / 60000));
  const what = scope === "address" ? "from this address" : "for this account";
  return `too many failed sign-ins ${what}; try again in ${minutes} min`;
}

/**
 * Open the panel database (`<dataDir>/panel.db`, or PostgreSQL at `databaseUrl`) and build the
 * auth object around it; `close()` closes that database. (The panel itself builds PanelAuth over
 * the process's one store: ../panel/instance.ts.)
 */
export async function createPanelAuth(
  options: PanelAuthOptions & { dataDir: string; databaseUrl?: string | null },
): Promise<PanelAuth & { close(): Promise<void> }> {
  const store = await openStore({ dataDir: options.dataDir, databaseUrl: options.databaseUrl });
  return Object.assign(new PanelAuth(fixedStore(store), options), { close: () => store.close() });
}
