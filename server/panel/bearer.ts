/**
 * API tokens on the panel's API (`Authorization: Bearer gdk_…`, /api/trpc only; pages and the
 * CSV download take sessions only). A bearer call carries no cookie and needs no Origin: a browser
 * never adds the header by itself, so a cross-site page cannot make one (no CSRF). A request with
 * both a bearer token and a session cookie is refused rather than guessed at, and each token is
 * rate-limited (GPUDECK_TOKEN_REQUESTS_PER_MINUTE, every replica together).
 */
import { bearerToken, sha256Hex } from "../auth/crypto";
import { sessionCookieName } from "../auth/sessions";
import type { PanelServices } from "./trpc";
import type { GuardResult } from "./requestGuard";

type Refusal = Extract<GuardResult, { ok: false }>;

/** The request's bearer secret: undefined without an Authorization header, null when it is not `Bearer <token>`. */
export function bearerSecret(headers: Headers): string | null | undefined {
  const header = headers.get("authorization");
  if (header === null) return undefined;
  return bearerToken(header);
}

/** Does the request carry a session cookie of ours (either name)? */
export function hasSessionCookie(headers: Headers): boolean {
  const names = new Set([sessionCookieName({ secure: false }), sessionCookieName({ secure: true })]);
  return (headers.get("cookie") ?? "").split(";").some((part) => names.has(part.split("=")[0]!.trim()));
}

/** Refuse a bearer request before anything runs: both credentials at once, a malformed header, too many requests. */
export async function bearerRefusal(req: Request, services: PanelServices): Promise<(Refusal & { retryAfterS?: number }) | null> {
  const secret = bearerSecret(req.headers);
  if (secret === undefined) return null;
  if (hasSessionCookie(req.headers)) {
    return {
      ok: false,
      status: 400,
      code: "BAD_REQUEST",
      message: "Send either an API token (Authorization: Bearer) or a session cookie, not both.",
    };
  }
  if (secret === null) return { ok: false, status: 401, code: "UNAUTHORIZED", message: "Not signed in: the Authorization header must be 'Bearer gdk_…'." };
  // the database away: the token cannot be checked either, and the context says so (SERVICE_UNAVAILABLE)
  const taken = await services.auth.tokenLimiter.take(sha256Hex(secret)).catch(() => ({ allowed: true as const }));
  if (taken.allowed) return null;
  const retryAfterS = Math.max(1, Math.ceil(taken.retryAfterMs / 1000));
  return {
    ok: false,
    status: 429,
    code: "TOO_MANY_REQUESTS",
    message: `Too many requests with this API token (at most ${services.auth.tokenLimiter.perMinute} a minute, GPUDECK_TOKEN_REQUESTS_PER_MINUTE); try again in ${retryAfterS} s.`,
    retryAfterS,
  };
}
