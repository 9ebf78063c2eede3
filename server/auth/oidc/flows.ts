/**
 * Sign-ins in progress at the identity provider. A browser sent there gets a random flow id in a
 * short-lived HttpOnly, SameSite=Lax cookie (Lax: the provider's redirect back is a cross-site
 * top-level navigation, which Strict would strip); the panel database keeps its SHA-256 with the
 * state, nonce and PKCE verifier, so any replica answers the callback. A flow is used once (a
 * second callback with it is a replay), lives 10 minutes, and at most MAX_PENDING are open at a
 * time (expired ones are deleted when a new one starts).
 */
import * as oidc from "openid-client";
import type { StoreSource } from "../../store/lazyStore";
import { randomToken, sha256Hex } from "../crypto";
import type { Clock, Ms } from "../types";

export const FLOW_TTL_MS: Ms = 10 * 60 * 1000;
export const MAX_PENDING_FLOWS = 10_000;

export interface Flow {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** the panel path to land on afterwards */
  next: string;
}

export type FlowLookup = { ok: true; flow: Flow } | { ok: false; reason: "bad-state" | "replayed" };

/** Cookie name: `__Secure-` under https (Path is the sign-in routes' folder, so not `__Host-`). */
export function flowCookieName(secure: boolean): string {
  return secure ? "__Secure-gpudeck_oidc" : "gpudeck_oidc";
}

const COOKIE_PATH = "/api/auth/oidc";

export function flowCookie(id: string, secure: boolean): string {
  return `${flowCookieName(secure)}=${id}; Path=${COOKIE_PATH}; Max-Age=${FLOW_TTL_MS / 1000}; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`;
}

export function clearFlowCookie(secure: boolean): string {
  return `${flowCookieName(secure)}=; Path=${COOKIE_PATH}; Max-Age=0; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`;
}

/** The flow id from a Cookie header; null when absent, malformed or sent twice. */
export function flowIdFromCookies(cookieHeader: string | null, secure: boolean): string | null {
  const name = flowCookieName(secure);
  const values = (cookieHeader ?? "")
    .split(";")
    .map((p) => p.trim())
    .filter((p) => p.startsWith(`${name}=`))
    .map((p) => p.slice(name.length + 1));
  if (values.length !== 1) return null;
  return /^[A-Za-z0-9_-]{20,100}$/.test(values[0]!) ? values[0]! : null;
}

/** A path on this panel, never another site (`//evil`, `/\evil`, a scheme). */
export function safeNext(next: string | null | undefined): string {
  if (!next || next.length > 2000 || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\") || /[\u0000-\u001f]/.test(next)) return "/";
  return next;
}

export class FlowStore {
  constructor(
    private readonly source: StoreSource,
    private readonly clock: Clock,
  ) {}

  /** A new flow and the id for its cookie; null when MAX_PENDING_FLOWS are open already. */
  async start(next: string): Promise<{ id: string; flow: Flow } | null> {
    const id = randomToken();
    const flow: Flow = { state: oidc.randomState(), nonce: oidc.randomNonce(), codeVerifier: oidc.randomPKCECodeVerifier(), next: safeNext(next) };
    const now = this.clock();
    const store = await this.source.get();
    const created = await store.write(async (tx) => {
      await tx.deleteFrom("oidc_flows").where("expires_at", "<=", now).execute();
      const { n } = await tx
        .selectFrom("oidc_flows")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow();
      if (Number(n) >= MAX_PENDING_FLOWS) return false;
      await tx
        .insertInto("oidc_flows")
        .values({
          id_hash: sha256Hex(id),
          state: flow.state,
          nonce: flow.nonce,
          code_verifier: flow.codeVerifier,
          next: flow.next,
          created_at: now,
          expires_at: now + FLOW_TTL_MS,
          used_at: null,
        })
        .execute();
      return true;
    });
    return created ? { id, flow } : null;
  }

  /**
   * Take the flow of this cookie for the callback's `state`: once only. A used flow answers
   * "replayed"; an unknown, expired or mismatched one "bad-state".
   */
  async take(id: string | null, state: string | null): Promise<FlowLookup> {
    if (!id || !state) return { ok: false, reason: "bad-state" };
    const now = this.clock();
    const store = await this.source.get();
    return store.write(async (tx) => {
      const row = await tx.selectFrom("oidc_flows").selectAll().where("id_hash", "=", sha256Hex(id)).executeTakeFirst();
      if (!row || row.expires_at <= now || row.state !== state) return { ok: false, reason: "bad-state" } as const;
      if (row.used_at !== null) return { ok: false, reason: "replayed" } as const;
      const marked = await tx
        .updateTable("oidc_flows")
        .set({ used_at: now })
        .where("id_hash", "=", row.id_hash)
        .where("used_at", "is", null)
        .executeTakeFirst();
      if (Number(marked.numUpdatedRows) !== 1) return { ok: false, reason: "replayed" } as const;
      return { ok: true, flow: { state: row.state, nonce: row.nonce, codeVerifier: row.code_verifier, next: row.next } } as const;
    });
  }
}
