/**
 * The provider's ID token of a session signed in through single sign-on, kept server-side only
 * (never sent to the browser), sealed with the panel's key (../../store/secretBox.ts) in the
 * session's row (`sessions.oidc_id_token`, migration 007), so it goes when the session goes. At
 * sign-out it is the `id_token_hint` of the redirect to the provider's end_session_endpoint: the
 * provider then knows whose session to end, and may skip asking "sign out?".
 */
import type { StoreSource } from "../../store/lazyStore";
import { sha256Hex, TOKEN_RE } from "../crypto";

/** Longer ID tokens are not kept (the hint is optional; an unbounded column is not). */
export const ID_TOKEN_MAX = 16_384;

const context = (idHash: string) => `sessions.oidc_id_token/${idHash}`;

export async function keepIdToken(source: StoreSource, sessionId: string, idToken: string | undefined): Promise<void> {
  if (!idToken || idToken.length > ID_TOKEN_MAX) return;
  const store = await source.get();
  const idHash = sha256Hex(sessionId);
  await store.db
    .updateTable("sessions")
    .set({ oidc_id_token: store.secrets.seal(idToken, context(idHash)) })
    .where("id_hash", "=", idHash)
    .execute();
}

/** The ID token kept with this session, or null (none, or it cannot be opened). */
export async function idTokenOf(source: StoreSource, sessionId: string | null): Promise<string | null> {
  if (!sessionId || !TOKEN_RE.test(sessionId)) return null;
  const store = await source.get();
  const idHash = sha256Hex(sessionId);
  const row = await store.db.selectFrom("sessions").select("oidc_id_token").where("id_hash", "=", idHash).executeTakeFirst();
  if (!row?.oidc_id_token) return null;
  try {
    return store.secrets.open(row.oidc_id_token, context(idHash));
  } catch {
    return null;
  }
}
