/**
 * Who is calling the panel, and from where. Demo mode acts as a demo admin; otherwise the
 * session cookie (or a trusted reverse proxy's identity header) decides.
 *
 * The TCP peer: route handlers cannot see the socket, so the panel's own server (serve.ts) strips
 * any incoming `x-gpudeck-peer` header and sets it from `socket.remoteAddress`. The header is
 * believed only in a process where that server said so (`trustPeerHeader()`); under plain
 * `next dev` the address is unknown (null). The client address (audit log, sign-in limits) is the
 * peer, or behind a trusted proxy (GPUDECK_TRUSTED_PROXIES) what it says in X-Forwarded-For
 * (./clientAddress.ts); trusted-proxy sign-in decides on the peer alone.
 *
 * Idle timeout: only what a person does renews a session: mutations here, page loads (serve.ts),
 * the CSV download. Queries and live streams do not: the UI polls some of them and keeps streams
 * open, which would keep an abandoned tab signed in for ever.
 *
 * Every request looks its session up in the database (no state in this process), so any replica
 * serves any browser. When the database cannot be reached the request carries `unavailable`, and
 * every procedure that needs a caller answers SERVICE_UNAVAILABLE with that sentence.
 */
import { isIP } from "node:net";
import { tokenActorName } from "../auth/apiTokens";
import { clearSessionCookie } from "../auth/sessions";
import { bearerSecret } from "./bearer";
import { isDatabaseUnreachable, unavailableSentence } from "../store/unavailable";
import { clientAddressResolver } from "./clientAddress";
import type { Principal } from "../auth/types";
import type { Actor } from "../contract/actors";
import type { PanelContext, PanelServices } from "./trpc";
import type { PanelConfig } from "./config";

export const PEER_HEADER = "x-gpudeck-peer";
const TRUST_KEY = Symbol.for("gpudeck.peerHeaderTrusted");
type TrustHolder = { [TRUST_KEY]?: boolean };

/** Called by the server that owns the sockets and rewrites PEER_HEADER on every request. */
export function trustPeerHeader(trusted = true): void {
  (globalThis as TrustHolder)[TRUST_KEY] = trusted;
}

/** The TCP peer address as the panel's server recorded it, or null when unknown. */
export function peerAddress(headers: Headers): string | null {
  if ((globalThis as TrustHolder)[TRUST_KEY] !== true) return null;
  const value = headers.get(PEER_HEADER)?.trim() ?? "";
  return value.length > 0 && value.length <= 64 && isIP(value) !== 0 ? value : null;
}

/** The client's address: the peer, or from X-Forwarded-For when the peer is a trusted proxy. */
export function clientAddress(headers: Headers, config: Pick<PanelConfig, "proxy">): string | null {
  return clientAddressResolver(config.proxy.trustedProxies).resolve(peerAddress(headers), headers.get("x-forwarded-for"));
}

/** Why a session that must enrol in two-factor sign-in can do nothing else yet. */
export const TWO_FACTOR_ENROLMENT = "your role must sign in with two factors: set up two-factor sign-in on the Account page first";

export const DEMO_ACTOR: Readonly<Actor> = Object.freeze({ user: "demo", role: "admin", unitPatterns: [] });

/** The actor of a principal; an API token acts as "owner (token name)". */
export function actorOf(principal: Principal, sourceAddr: string | null): Actor {
  const user = principal.token ? tokenActorName(principal.username, principal.token.name) : principal.username;
  return { user, role: principal.role, unitPatterns: [...principal.unitPatterns], sourceAddr: sourceAddr ?? undefined };
}

/** What a request's context is built from. */
export interface ContextSources {
  config: Pick<PanelConfig, "demo" | "secureCookies" | "proxy">;
  services: PanelServices;
}

export async function createPanelContext(req: Request, { config, services }: ContextSources, resHeaders: Headers): Promise<PanelContext> {
  const peer = peerAddress(req.headers);
  const sourceAddr = clientAddress(req.headers, config);
  const base = {
    sourceAddr,
    userAgent: req.headers.get("user-agent")?.slice(0, 512) ?? null,
    secure: config.secureCookies,
    resHeaders,
    auditedCalls: new Set<string>(),
  };
  if (config.demo) {
    return {
      actor: { ...DEMO_ACTOR, unitPatterns: [], sourceAddr: sourceAddr ?? undefined },
      sourceAddr: sourceAddr ?? undefined,
      panelRequest: { ...base, principal: null, sessionId: null, authRefusal: null, unavailable: null },
      services,
    };
  }
  const signedOut = (authRefusal: string, unavailable: string | null = null): PanelContext => ({
    actor: null,
    sourceAddr: sourceAddr ?? undefined,
    panelRequest: { ...base, principal: null, sessionId: null, authRefusal, unavailable },
    services,
  });
  let who: Awaited<ReturnType<typeof services.auth.authenticate>> | Awaited<ReturnType<typeof services.auth.tokens.authenticate>>;
  const secret = bearerSecret(req.headers);
  try {
    who =
      secret !== undefined
        ? await services.auth.tokens.authenticate(secret)
        : await services.auth.authenticate({ remoteAddress: peer, headers: req.headers, secure: base.secure, touch: req.method === "POST" });
  } catch (err) {
    if (!isDatabaseUnreachable(err)) throw err;
    const sentence = unavailableSentence(services.store.dialect, err);
    return signedOut(sentence, sentence);
  }
  if (!who.ok) {
    if ("clearCookie" in who && who.clearCookie) resHeaders.append("Set-Cookie", clearSessionCookie({ secure: base.secure }));
    return signedOut(who.message);
  }
  if ("enrolTwoFactor" in who && who.enrolTwoFactor) {
    return {
      actor: null,
      sourceAddr: sourceAddr ?? undefined,
      panelRequest: {
        ...base,
        principal: null,
        sessionId: who.sessionId,
        authRefusal: TWO_FACTOR_ENROLMENT,
        unavailable: null,
        twoFactorEnrolment: who.principal,
      },
      services,
    };
  }
  return {
    actor: actorOf(who.principal, sourceAddr),
    sourceAddr: sourceAddr ?? undefined,
    panelRequest: {
      ...base,
      principal: who.principal,
      sessionId: "via" in who && who.via === "session" ? who.sessionId : null,
      authRefusal: null,
      unavailable: null,
    },
    services,
  };
}
