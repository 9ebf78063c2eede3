/**
 * Checks every request to the panel's API before tRPC sees it:
 * - only GET (queries, subscriptions) and POST (mutations);
 * - the Host must be one of the panel's names (an IP literal, localhost, the machine's name or a
 *   configured one): a DNS-rebinding page addresses us by the attacker's name;
 * - a browser request must come from our own origin: an Origin header must match the Host (or a
 *   configured origin), and without Origin, Sec-Fetch-Site must not say cross-site or same-site.
 *   This covers mutations and subscriptions (same-origin EventSource sends no Origin);
 * - POST bodies must be `application/json`, unencoded, and at most MAX_BODY_BYTES (a cross-site
 *   HTML form can send only urlencoded, multipart or text/plain, and tRPC would otherwise accept
 *   form data for a mutation);
 * - bounded URL length and batch size.
 */
import { isIP } from "node:net";

export const MAX_BODY_BYTES = 64 * 1024;
export const MAX_URL_LENGTH = 16 * 1024;
export const MAX_BATCH_CALLS = 25;

export interface GuardPolicy {
  allowedOrigins: readonly string[];
  /** Host names (lowercase, no port) besides IP literals and localhost. */
  allowedHosts: readonly string[];
}

export type GuardResult =
  | { ok: true }
  | {
      ok: false;
      status: number;
      code: "FORBIDDEN" | "METHOD_NOT_SUPPORTED" | "UNSUPPORTED_MEDIA_TYPE" | "PAYLOAD_TOO_LARGE" | "BAD_REQUEST" | "UNAUTHORIZED" | "TOO_MANY_REQUESTS";
      message: string;
    };

/** `example.com:3000` → `example.com`; `[::1]:3000` → `::1`; null when unparsable. */
export function hostName(hostHeader: string | null): string | null {
  if (!hostHeader || hostHeader.length > 300) return null;
  try {
    return new URL(`http://${hostHeader}`).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  } catch {
    return null;
  }
}

export function hostAllowed(hostHeader: string | null, allowedHosts: readonly string[]): boolean {
  const name = hostName(hostHeader);
  if (name === null) return false;
  if (isIP(name) !== 0 || name === "localhost") return true;
  return allowedHosts.includes(name);
}

export function originAllowed(req: Request, allowedOrigins: readonly string[]): boolean {
  const origin = req.headers.get("origin");
  const host = req.headers.get("host");
  if (origin !== null) {
    if (allowedOrigins.includes(origin)) return true;
    try {
      const url = new URL(origin); // "null" (sandboxed frames, file:) throws
      return host !== null && (url.protocol === "http:" || url.protocol === "https:") && url.host === host.toLowerCase();
    } catch {
      return false;
    }
  }
  const site = req.headers.get("sec-fetch-site");
  // No Origin: same-origin EventSource and GETs, typed URLs, and non-browser clients.
  return site === null || site === "same-origin" || site === "none";
}

/**
 * The refusal of a request from another origin, saying what it saw, what it expected and what to
 * set: behind a proxy that rewrites Host (nginx's `$host` drops the port) or without
 * panel.public_url, every action is refused and the person needs to know why.
 */
export function originRefusal(req: Request, allowedOrigins: readonly string[]): string {
  const origin = req.headers.get("origin");
  const host = req.headers.get("host");
  const seen =
    origin !== null
      ? `origin '${origin.slice(0, 200)}'`
      : `a page of another site (Sec-Fetch-Site: ${(req.headers.get("sec-fetch-site") ?? "").slice(0, 40)}, no Origin)`;
  const expected = [...allowedOrigins.map((o) => `'${o}'`), ...(host ? [`'http(s)://${host.slice(0, 200)}' (the Host header it was sent with)`] : [])];
  return (
    `Cross-origin request refused. It came from ${seen}; this panel expected ${expected.length ? expected.join(" or ") : "a Host header"}. ` +
    "If people reach the panel through a reverse proxy, set panel.public_url (GPUDECK_PUBLIC_URL) to the address they open, " +
    "and have the proxy pass the Host header with its port (nginx: proxy_set_header Host $http_host)."
  );
}

/** Number of procedures in a tRPC URL (`/api/trpc/a,b,c?batch=1`). */
export function batchSize(url: URL): number {
  const last = url.pathname.slice(url.pathname.lastIndexOf("/") + 1);
  return last.split(",").length;
}

export function guardRequest(req: Request, policy: GuardPolicy): GuardResult {
  if (req.method !== "GET" && req.method !== "POST") {
    return { ok: false, status: 405, code: "METHOD_NOT_SUPPORTED", message: "Method not allowed: use GET for queries and subscriptions, POST for mutations." };
  }
  if (req.url.length > MAX_URL_LENGTH) return { ok: false, status: 414, code: "BAD_REQUEST", message: `Request URL over ${MAX_URL_LENGTH} characters.` };
  const host = req.headers.get("host");
  if (!hostAllowed(host, policy.allowedHosts)) {
    return {
      ok: false,
      status: 403,
      code: "FORBIDDEN",
      message: `Host '${(hostName(host) ?? host ?? "").slice(0, 100)}' is not a name of this panel; set GPUDECK_PUBLIC_URL or GPUDECK_ALLOWED_HOSTS to serve it under that name.`,
    };
  }
  if (!originAllowed(req, policy.allowedOrigins)) {
    return { ok: false, status: 403, code: "FORBIDDEN", message: originRefusal(req, policy.allowedOrigins) };
  }
  if (batchSize(new URL(req.url)) > MAX_BATCH_CALLS) {
    return { ok: false, status: 400, code: "BAD_REQUEST", message: `More than ${MAX_BATCH_CALLS} calls in one batch.` };
  }
  if (req.method === "POST") {
    const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "application/json") {
      return { ok: false, status: 415, code: "UNSUPPORTED_MEDIA_TYPE", message: "Only application/json requests are accepted." };
    }
    const encoding = req.headers.get("content-encoding");
    if (encoding !== null && encoding.trim().toLowerCase() !== "identity") {
      return { ok: false, status: 415, code: "UNSUPPORTED_MEDIA_TYPE", message: "Compressed request bodies are not accepted." };
    }
    const length = req.headers.get("content-length");
    if (length !== null && !(Number(length) <= MAX_BODY_BYTES)) {
      return { ok: false, status: 413, code: "PAYLOAD_TOO_LARGE", message: `Request body over ${MAX_BODY_BYTES} bytes.` };
    }
  }
  return { ok: true };
}

/**
 * Read a request body, refusing it once it passes `limit` bytes whatever Content-Length said
 * (a chunked body has none). Returns null when over the limit.
 */
export async function readBodyLimited(req: Request, limit = MAX_BODY_BYTES): Promise<Uint8Array | null> {
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}
