/**
 * The panel's own API (`/api/trpc/…`) served straight from node:http to the panel's web handler
 * (`panel.handle`, the same one Next's route file calls), without Next's request pipeline.
 * Why: every live event to every browser went through Next's response streaming (several web
 * streams per chunk, each step a promise Next's async-context hooks track); at a few hundred
 * viewers that cost more than everything else the panel does (bench/fanout.ts). The handler, its
 * guards and its answers are the same either way; the security headers Next adds to every
 * response are added here too.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { directStreamOf } from "./eventStream";
import { SECURITY_HEADERS } from "./securityHeaders";
import { socketOut } from "./sseWriter";

/** Paths served here rather than by Next. */
export const BRIDGED_PATH = /^\/api\/trpc\//;

/** A web Request for a node:http request; `signal` aborts when the client goes away. */
export function toWebRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(new URL(req.url ?? "/", `http://${req.headers.host ?? "panel"}`), {
    method,
    headers,
    signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
  } as RequestInit);
}

/** Answer `req` with `handle`'s Response: status, headers (each Set-Cookie apart), the body as it comes. */
export async function serveWebHandler(req: IncomingMessage, res: ServerResponse, handle: (req: Request) => Promise<Response>): Promise<void> {
  const gone = new AbortController();
  res.once("close", () => gone.abort());
  const response = await handle(toWebRequest(req, gone.signal));
  const headers: Record<string, string | string[]> = {};
  for (const h of SECURITY_HEADERS) headers[h.key] = h.value;
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  res.writeHead(response.status, headers);
  if (!response.body || req.method === "HEAD") {
    res.end();
    return;
  }
  res.flushHeaders();
  // a live stream of the panel's SSE encoder: its frames go straight to this socket (./sseWriter.ts)
  const direct = directStreamOf(response)?.(socketOut(res));
  if (direct) return await direct;
  const reader = response.body.getReader();
  gone.signal.addEventListener("abort", () => void reader.cancel().catch(() => undefined), { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || gone.signal.aborted) break;
      // a client that reads slowly: wait for its socket to drain (the stream's own queue is bounded)
      if (!res.write(value)) await new Promise<void>((resolve) => (res.once("drain", resolve), res.once("close", resolve)));
    }
  } catch {
    // the client went away mid-stream, or the body failed: nothing more to send
  } finally {
    res.end();
  }
}
