/**
 * Sign-in through the identity provider with openid-client: discovery (cached; a failure is tried
 * again on the next use), the authorization code flow with PKCE, state and nonce, the ID token
 * checked by the library (issuer, audience, expiry, signature, nonce), claims from the ID token and
 * the userinfo endpoint, then the account (./accounts.ts) and a panel session. Every sign-in,
 * refusal and role change is audited (action `login`, reason `oidc: <code>`; role changes as
 * `user.update`). TLS to the provider is Node's: its CA store plus NODE_EXTRA_CA_CERTS.
 */
import * as oidc from "openid-client";
import type { OidcRefusal } from "../../contract/oidc";
import type { PanelAuth, RequestMeta } from "../panelAuth";
import { systemClock, type Clock } from "../types";
import { usernameProblem } from "../userFields";
import { accountForSignIn } from "./accounts";
import { groupsOf, roleForGroups, type OidcConfig } from "./config";
import { idTokenOf, keepIdToken } from "./idTokens";
import { clearFlowCookie, flowCookie, FlowStore, flowIdFromCookies } from "./flows";

/** A refusal before anyone is known (bad state, a provider error): the panel records these rate-limited. */
export interface EarlyRefusal {
  sourceAddr: string | null;
  reason: string;
  detail: string;
}

export interface OidcSignInOptions {
  config: OidcConfig;
  auth: PanelAuth;
  clock?: Clock;
  /** how refusals nobody can be named for are recorded (default: straight into the audit log) */
  recordEarlyRefusal?: (refusal: EarlyRefusal) => Promise<void>;
  /** tests: the fetch used for every request to the provider */
  fetch?: typeof fetch;
  /** tests: seconds added to the panel's clock when checking tokens */
  clockSkewSeconds?: number;
  /** discovery and token requests give up after this (seconds, default 10) */
  timeoutSeconds?: number;
}

export type StartResult = { ok: true; location: string; setCookie: string } | { ok: false; reason: OidcRefusal };
export type FinishResult = { ok: true; next: string; username: string; setCookies: string[] } | { ok: false; reason: OidcRefusal; setCookies: string[] };

/** What went wrong in openid-client, as one of the refusals the sign-in page explains. */
export function refusalOf(err: unknown): OidcRefusal {
  if (err instanceof oidc.AuthorizationResponseError) return "provider-refused";
  if (err instanceof oidc.ResponseBodyError) return err.error === "invalid_grant" ? "code-refused" : "provider-refused";
  if (err instanceof oidc.ClientError) {
    const claim = ((err.cause as { cause?: { claim?: unknown } } | undefined)?.cause?.claim ?? null) as string | null;
    if (err.code === "OAUTH_JWT_TIMESTAMP_CHECK_FAILED") return "expired-token";
    if (err.code === "OAUTH_JWT_CLAIM_COMPARISON_FAILED") {
      if (claim === "aud" || claim === "azp") return "wrong-audience";
      if (claim === "iss") return "wrong-issuer";
      return "bad-token";
    }
    if (err.code === "OAUTH_INVALID_RESPONSE" || err.code === "OAUTH_KEY_SELECTION_FAILED" || err.code === "OAUTH_JWS_SIGNATURE_VERIFICATION_FAILED")
      return "bad-token";
  }
  if (err instanceof Error && /signature/i.test(err.message)) return "bad-token";
  return "provider-unreachable";
}

function describe(err: unknown): string {
  if (err instanceof oidc.ResponseBodyError) return `${err.error}${err.error_description ? `: ${err.error_description}` : ""}`;
  if (err instanceof oidc.AuthorizationResponseError) return `${err.error}${err.error_description ? `: ${err.error_description}` : ""}`;
  const e = err as Error & { cause?: Error };
  return `${e.message ?? String(err)}${e.cause?.message ? ` (${e.cause.message})` : ""}`.slice(0, 500);
}

export class OidcSignIn {
  readonly config: OidcConfig;
  private readonly auth: PanelAuth;
  private readonly clock: Clock;
  private readonly flows: FlowStore;
  private readonly options: OidcSignInOptions;
  private discovered: Promise<oidc.Configuration> | null = null;

  constructor(options: OidcSignInOptions) {
    this.options = options;
    this.config = options.config;
    this.auth = options.auth;
    this.clock = options.clock ?? systemClock;
    this.flows = new FlowStore(options.auth.store, this.clock);
  }

  /** The provider's configuration from its discovery document (cached once it answered). */
  discover(): Promise<oidc.Configuration> {
    this.discovered ??= this.load().catch((err: unknown) => {
      this.discovered = null;
      throw err;
    });
    return this.discovered;
  }

  private async load(): Promise<oidc.Configuration> {
    const { config } = this;
    const auth = config.clientSecret ? oidc.ClientSecretBasic(config.clientSecret) : oidc.None();
    const execute = config.insecureLoopback ? [oidc.allowInsecureRequests] : [];
    const discoveryOptions: oidc.DiscoveryRequestOptions = { execute, timeout: this.options.timeoutSeconds ?? 10 };
    if (this.options.fetch) discoveryOptions[oidc.customFetch] = this.options.fetch as oidc.CustomFetch;
    const metadata: Partial<oidc.ClientMetadata> = { redirect_uris: [config.redirectUri] };
    if (this.options.clockSkewSeconds) metadata[oidc.clockSkew] = this.options.clockSkewSeconds;
    return oidc.discovery(new URL(config.issuer), config.clientId, metadata, auth, discoveryOptions);
  }

  /** Send the browser to the provider: a new flow, its cookie, the authorization URL. */
  async start(next: string | null, meta: RequestMeta & { secure: boolean }): Promise<StartResult> {
    let c: oidc.Configuration;
    try {
      c = await this.discover();
    } catch (err) {
      await this.early(meta, "provider-unreachable", describe(err));
      return { ok: false, reason: "provider-unreachable" };
    }
    const started = await this.flows.start(next ?? "/");
    if (!started) return { ok: false, reason: "busy" };
    const { flow, id } = started;
    const url = oidc.buildAuthorizationUrl(c, {
      redirect_uri: this.config.redirectUri,
      scope: this.config.scopes.join(" "),
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(flow.codeVerifier),
      code_challenge_method: "S256",
    });
    return { ok: true, location: url.href, setCookie: flowCookie(id, meta.secure) };
  }

  /** The provider sent the browser back: check everything, then sign in (or say why not). */
  async finish(requestUrl: URL, cookieHeader: string | null, meta: RequestMeta & { secure: boolean }): Promise<FinishResult> {
    const clear = [clearFlowCookie(meta.secure)];
    const refuse = (reason: OidcRefusal): FinishResult => ({ ok: false, reason, setCookies: clear });
    const lookup = await this.flows.take(flowIdFromCookies(cookieHeader, meta.secure), requestUrl.searchParams.get("state"));
    if (!lookup.ok) {
      await this.early(
        meta,
        lookup.reason,
        lookup.reason === "replayed" ? "this sign-in response was used already" : "no sign-in in progress in this browser matches the response's state",
      );
      return refuse(lookup.reason);
    }
    const { flow } = lookup;
    let claims: Record<string, unknown>;
    let idToken: string | undefined;
    try {
      const c = await this.discover();
      // the URL the provider redirected to, whatever Host the request arrived with
      const current = new URL(this.config.redirectUri);
      current.search = requestUrl.search;
      const tokens = await oidc.authorizationCodeGrant(c, current, {
        pkceCodeVerifier: flow.codeVerifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
      });
      const idClaims = tokens.claims();
      if (!idClaims) throw new Error("the provider sent no ID token");
      idToken = tokens.id_token;
      claims = { ...idClaims };
      if (c.serverMetadata().userinfo_endpoint) {
        const info = await oidc.fetchUserInfo(c, tokens.access_token, idClaims.sub);
        claims = { ...info, ...idClaims, ...pick(info, [this.config.usernameClaim, this.config.groupsClaim]) };
      }
    } catch (err) {
      const reason = refusalOf(err);
      await this.early(meta, reason, describe(err));
      return refuse(reason);
    }
    const subject = String(claims.sub);
    const username = typeof claims[this.config.usernameClaim] === "string" ? (claims[this.config.usernameClaim] as string) : "";
    if (usernameProblem(username)) {
      await this.record(
        meta,
        null,
        "refused",
        "bad-username",
        `claim ${this.config.usernameClaim} of sub ${subject.slice(0, 100)}: ${usernameProblem(username)}`,
      );
      return refuse("bad-username");
    }
    const groups = groupsOf(claims, this.config.groupsClaim);
    const mapping = roleForGroups(groups, this.config.roles);
    const known = await this.auth.users.getUser(username);
    if (!mapping) {
      await this.record(meta, { name: username, role: known?.role ?? null }, "refused", "no-group", `groups: ${groups.join(", ").slice(0, 2000) || "(none)"}`);
      return refuse("no-group");
    }
    const account = await accountForSignIn(this.auth.store, this.clock, { subject, username, mapping });
    if (!account.ok) {
      await this.record(
        meta,
        { name: account.user?.username ?? username, role: account.user?.role ?? null },
        "refused",
        account.reason,
        `sub ${subject.slice(0, 100)}`,
      );
      return refuse(account.reason);
    }
    const { user } = account;
    if (account.created) {
      await this.auditRow(
        meta,
        user.username,
        user.role,
        "user.add",
        "ok",
        "oidc: first sign-in",
        `user=${user.username} role=${user.role} units=${user.unitPatterns.join(",") || "-"} source=oidc`,
      );
    }
    if (account.change) {
      this.auth.users.announceChange();
      const { from, to } = account.change;
      await this.auditRow(
        meta,
        user.username,
        user.role,
        "user.update",
        "ok",
        "oidc: groups",
        `user=${user.username} role ${from.role} → ${to.role} units ${from.units.join(",") || "-"} → ${to.units.join(",") || "-"}`,
      );
    }
    // GPUDECK_SESSIONS_PER_USER: the oldest end, audited (session.limit)
    const { id, session } = await this.auth.startSession(user, meta);
    await keepIdToken(this.auth.store, id, idToken);
    await this.record(meta, { name: user.username, role: user.role }, "ok", null, `group ${mapping.group}`);
    return { ok: true, next: flow.next, username: user.username, setCookies: [...clear, this.auth.cookieFor(id, session, meta)] };
  }

  /**
   * Where to send the browser after the panel's sign-out: the provider's end_session_endpoint, if
   * it has one, with the session's ID token as `id_token_hint` (call it before the session ends).
   */
  async endSessionUrl(sessionId: string | null = null): Promise<string | null> {
    try {
      const c = await this.discover();
      if (!c.serverMetadata().end_session_endpoint) return null;
      const hint = await idTokenOf(this.auth.store, sessionId);
      const params: Record<string, string> = { client_id: this.config.clientId, post_logout_redirect_uri: this.config.postLogoutRedirectUri };
      if (hint) params.id_token_hint = hint;
      return oidc.buildEndSessionUrl(c, params).href;
    } catch {
      return null;
    }
  }

  private async early(meta: RequestMeta, reason: OidcRefusal, detail: string): Promise<void> {
    const refusal = { sourceAddr: meta.sourceAddr, reason: `oidc: ${reason}`, detail };
    if (this.options.recordEarlyRefusal) await this.options.recordEarlyRefusal(refusal);
    else await this.auditRow(meta, null, null, "login", "refused", refusal.reason, detail);
  }

  private record(meta: RequestMeta, who: { name: string; role: string | null } | null, outcome: "ok" | "refused", reason: OidcRefusal | null, detail: string) {
    return this.auditRow(meta, who?.name ?? null, who?.role ?? null, "login", outcome, reason ? `oidc: ${reason}` : `oidc (${this.config.name})`, detail);
  }

  private async auditRow(meta: RequestMeta, user: string | null, role: string | null, action: string, outcome: string, reason: string, detail: string) {
    await this.auth.audit.recordAudit({ user, role, sourceAddr: meta.sourceAddr, host: null, unit: null, action, reason, outcome, detail });
  }
}

function pick(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
}
