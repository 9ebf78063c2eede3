/**
 * The single sign-on routes (served by app/api/auth/oidc/[step]/route.ts):
 *   GET /api/auth/oidc/login?next=/path   → 303 to the identity provider (a flow cookie set)
 *   GET /api/auth/oidc/callback?code&state → signed in: a page that moves on to `next`; refused:
 *                                            303 to /login?error=<code>, where the page says why
 * The signed-in answer is a 200 page with a meta refresh, not a redirect: the session cookie is
 * SameSite=Strict, and a redirect chain that began at the provider (another site) would arrive
 * without it; a navigation started by the panel's own page carries it.
 */
import { OIDC_CALLBACK_PATH, OIDC_LOGIN_PATH, type OidcRefusal } from "../contract/oidc";
import type { OidcSignIn } from "../auth/oidc/signIn";
import { safeNext } from "../auth/oidc/flows";
import { isDatabaseUnreachable, unavailableSentence } from "../store/unavailable";
import type { PanelConfig } from "./config";
import { clientAddress } from "./context";

export interface OidcRouteDeps {
  config: Pick<PanelConfig, "secureCookies" | "proxy" | "demo">;
  signIn: OidcSignIn | null;
  dialect: "sqlite" | "postgres";
}

const NO_STORE = { "Cache-Control": "no-store" };

function refused(reason: OidcRefusal, cookies: string[] = []): Response {
  const headers = new Headers({ ...NO_STORE, Location: `/login?error=${reason}` });
  for (const c of cookies) headers.append("Set-Cookie", c);
  return new Response(null, { status: 303, headers });
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function movingOn(next: string, cookies: string[]): Response {
  const to = escapeHtml(safeNext(next));
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${to}"><title>Signed in · gpudeck</title></head><body><p>Signed in. <a href="${to}">Continue to gpudeck</a>.</p></body></html>\n`;
  const headers = new Headers({ ...NO_STORE, "Content-Type": "text/html; charset=utf-8" });
  for (const c of cookies) headers.append("Set-Cookie", c);
  return new Response(body, { status: 200, headers });
}

export async function handleOidcRequest(req: Request, deps: OidcRouteDeps): Promise<Response> {
  const url = new URL(req.url);
  if (req.method !== "GET" && req.method !== "HEAD") return new Response("Use GET.\n", { status: 405, headers: { ...NO_STORE, Allow: "GET" } });
  if (deps.config.demo) return new Response(null, { status: 303, headers: { ...NO_STORE, Location: "/" } });
  const { signIn } = deps;
  if (!signIn) return refused("not-configured");
  const meta = {
    sourceAddr: clientAddress(req.headers, deps.config),
    userAgent: req.headers.get("user-agent")?.slice(0, 512) ?? null,
    secure: deps.config.secureCookies,
  };
  try {
    if (url.pathname === OIDC_LOGIN_PATH) {
      const started = await signIn.start(url.searchParams.get("next"), meta);
      if (!started.ok) return refused(started.reason);
      return new Response(null, { status: 303, headers: { ...NO_STORE, Location: started.location, "Set-Cookie": started.setCookie } });
    }
    if (url.pathname === OIDC_CALLBACK_PATH) {
      const done = await signIn.finish(url, req.headers.get("cookie"), meta);
      return done.ok ? movingOn(done.next, done.setCookies) : refused(done.reason, done.setCookies);
    }
  } catch (err) {
    if (isDatabaseUnreachable(err))
      return new Response(`${unavailableSentence(deps.dialect, err)}\n`, {
        status: 503,
        headers: { ...NO_STORE, "Content-Type": "text/plain; charset=utf-8" },
      });
    throw err;
  }
  return new Response("Not found.\n", { status: 404, headers: NO_STORE });
}
