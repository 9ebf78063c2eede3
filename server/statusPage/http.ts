/**
 * The status page's HTTP routes, without a session: `/status` and `/status/<token>` (HTML),
 * `/api/status` (the same as JSON) and `/api/status/events` (SSE: the document again whenever it
 * changes, while the page is open). Each checks the Host (the panel's DNS-rebinding guard) and
 * the page's switch and token (`?token=` or the path); a signed-in panel user may always look
 * (admins preview it before turning it on). Responses are cache-friendly (ETag, a short
 * max-age: public for a public page, private for a link with a token) and never carry cookies.
 * Streams are capped for the panel (500) and, for callers who are not signed in, per address
 * (20; IPv6 by /64); a signed-in caller's stream re-checks the session and ends with it.
 */
import { createHash, randomBytes } from "node:crypto";
import type { StatusDocument } from "../contract/statusPage";
import { hostAllowed } from "../panel/requestGuard";
import { errorPageHtml, servicesHtml, statusPageHtml } from "./html";
import type { StatusPageService } from "./statusService";

export interface StatusHttpDeps {
  service: StatusPageService;
  allowedHosts: readonly string[];
  /** a panel session (or demo mode) */
  signedIn(req: Request): boolean | Promise<boolean>;
  shutdown: AbortSignal;
  /** how often an open stream looks for a change */
  streamIntervalMs?: number;
  /** the caller's address as the panel counts it (IPv6 by /64); null when unknown */
  clientKey?(req: Request): string | null;
  /** how often a signed-in caller's stream re-checks the session (default 15 s) */
  sessionRecheckMs?: number;
  /** open streams at most per address of callers who are not signed in (default 20) */
  streamsPerAddress?: number;
}

const MAX_STREAMS = 500;
const STREAMS_PER_ADDRESS = 20;
let openStreams = 0;
/** open streams of callers not signed in, by address */
const anonymousByAddress = new Map<string, number>();

type Checked = { ok: true; token: string | null; isPublic: boolean } | { ok: false; response: Response };

const TOKEN_RE = /^[\x21-\x7e]{1,200}$/;

async function check(req: Request, deps: StatusHttpDeps, pathToken: string | null, html: boolean): Promise<Checked> {
  const fail = (status: number, message: string) => ({
    ok: false as const,
    response: html
      ? new Response(errorPageHtml(status, message), { status, headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" } })
      : Response.json({ error: message }, { status, headers: { "cache-control": "no-store" } }),
  });
  if (req.method !== "GET" && req.method !== "HEAD") return fail(405, "Use GET.");
  if (!hostAllowed(req.headers.get("host"), deps.allowedHosts)) return fail(403, "This panel does not answer to that name.");
  const raw = pathToken ?? new URL(req.url).searchParams.get("token");
  const token = raw && TOKEN_RE.test(raw) ? raw : null;
  const access = await deps.service.access(token);
  if (access.ok) return { ok: true, token, isPublic: token === null };
  if (await deps.signedIn(req)) return { ok: true, token: null, isPublic: false };
  return fail(access.status, access.message);
}

function cacheHeaders(isPublic: boolean, body: string): Record<string, string> {
  return {
    "cache-control": isPublic ? "public, max-age=10, stale-while-revalidate=30" : "private, max-age=10",
    etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`,
    "referrer-policy": "no-referrer",
    "x-robots-tag": "noindex",
    "x-content-type-options": "nosniff",
    vary: "Cookie",
  };
}

function maybeNotModified(req: Request, headers: Record<string, string>, body: string, type: string): Response {
  if (req.headers.get("if-none-match") === headers.etag) return new Response(null, { status: 304, headers });
  return new Response(req.method === "HEAD" ? null : body, { status: 200, headers: { ...headers, "content-type": type } });
}

const eventsUrl = (token: string | null, html: boolean) => {
  const q = new URLSearchParams();
  if (token) q.set("token", token);
  if (html) q.set("html", "1");
  const s = q.toString();
  return `/api/status/events${s ? `?${s}` : ""}`;
};

/** `/status` and `/status/<token>`. */
export async function handleStatusPage(req: Request, deps: StatusHttpDeps, pathToken: string | null = null): Promise<Response> {
  const c = await check(req, deps, pathToken, true);
  if (!c.ok) return c.response;
  const doc = await deps.service.document();
  const nonce = randomBytes(16).toString("base64");
  // the ETag must not change with the nonce: it is computed on the data
  const headers = cacheHeaders(c.isPublic, JSON.stringify(doc) + (c.token ?? ""));
  headers["content-security-policy"] =
    `default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
  if (req.headers.get("if-none-match") === headers.etag) return new Response(null, { status: 304, headers });
  const body = statusPageHtml(doc, { eventsUrl: eventsUrl(c.token, true), nonce });
  return new Response(req.method === "HEAD" ? null : body, { status: 200, headers: { ...headers, "content-type": "text/html; charset=utf-8" } });
}

/** `/api/status`. */
export async function handleStatusJson(req: Request, deps: StatusHttpDeps): Promise<Response> {
  const c = await check(req, deps, null, false);
  if (!c.ok) return c.response;
  const body = JSON.stringify(await deps.service.document());
  return maybeNotModified(req, cacheHeaders(c.isPublic, body), body, "application/json");
}

function sseEvent(name: string, data: string): string {
  return `event: ${name}\n${data
    .split("\n")
    .map((l) => `data: ${l}`)
    .join("\n")}\n\n`;
}

/** `/api/status/events`: the document now and whenever it changes (`status` events, JSON; `?html=1`: `services`, the page's HTML). */
export async function handleStatusEvents(req: Request, deps: StatusHttpDeps): Promise<Response> {
  const c = await check(req, deps, null, false);
  if (!c.ok) return c.response;
  if (openStreams >= MAX_STREAMS)
    return Response.json({ error: "Too many open status streams; reload later." }, { status: 503, headers: { "retry-after": "30" } });
  const html = new URL(req.url).searchParams.get("html") === "1";
  const token = c.token;
  const signedIn = !c.isPublic && token === null;
  // one address must not hold the panel's whole allowance (a signed-in caller is capped by the session)
  const address = signedIn ? null : (deps.clientKey?.(req) ?? null);
  const perAddress = deps.streamsPerAddress ?? STREAMS_PER_ADDRESS;
  if (address !== null && (anonymousByAddress.get(address) ?? 0) >= perAddress)
    return Response.json(
      { error: `Too many open status streams from your address (at most ${perAddress}); close some pages or reload later.` },
      { status: 429, headers: { "retry-after": "30" } },
    );
  const interval = deps.streamIntervalMs ?? 2000;
  const recheckMs = deps.sessionRecheckMs ?? 15_000;
  let checkedSessionAt = Date.now();
  const encoder = new TextEncoder();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let closed = false;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      openStreams++;
      if (address !== null) anonymousByAddress.set(address, (anonymousByAddress.get(address) ?? 0) + 1);
      let last = "";
      let quietFor = 0;
      const close = () => {
        if (closed) return;
        closed = true;
        release();
        if (timer) clearTimeout(timer);
        try {
          controller.close();
        } catch {
          // already closed by the client
        }
      };
      const stop = () => close();
      req.signal.addEventListener("abort", stop, { once: true });
      deps.shutdown.addEventListener("abort", stop, { once: true });
      const step = async () => {
        if (closed) return;
        try {
          // the link may have been rotated or the page turned off meanwhile
          if (!signedIn && !(await deps.service.access(token)).ok) {
            controller.enqueue(encoder.encode(sseEvent("gone", "this status page link is no longer valid")));
            return close();
          }
          // signed in (the page may be off): the session must still be valid, unless the page is open to all now
          if (signedIn && Date.now() - checkedSessionAt >= recheckMs) {
            checkedSessionAt = Date.now();
            if (!(await deps.service.access(null)).ok && !(await deps.signedIn(req))) {
              controller.enqueue(encoder.encode(sseEvent("gone", "your session has ended; sign in again")));
              return close();
            }
          }
          const doc: StatusDocument = await deps.service.document();
          const json = JSON.stringify({ ...doc, generatedAtMs: 0 });
          if (json !== last) {
            last = json;
            quietFor = 0;
            controller.enqueue(encoder.encode(html ? sseEvent("services", servicesHtml(doc)) : sseEvent("status", JSON.stringify(doc))));
          } else if ((quietFor += interval) >= 15_000) {
            quietFor = 0;
            controller.enqueue(encoder.encode(": ping\n\n"));
          }
        } catch {
          // a failed read: try again on the next step
        }
        if (!closed) timer = setTimeout(() => void step(), interval);
      };
      controller.enqueue(encoder.encode("retry: 5000\n\n"));
      void step();
    },
    cancel() {
      if (!closed) {
        closed = true;
        release();
        if (timer) clearTimeout(timer);
      }
    },
  });
  function release(): void {
    openStreams--;
    if (address === null) return;
    const n = (anonymousByAddress.get(address) ?? 1) - 1;
    if (n > 0) anonymousByAddress.set(address, n);
    else anonymousByAddress.delete(address);
  }
  return new Response(stream, {
    status: 200,
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no", "referrer-policy": "no-referrer" },
  });
}
