/**
 * Checks every request to the panel's tRPC endpoint before tRPC sees it:
 * - mutations must be JSON (a cross-site HTML form cannot send application/json);
 * - mutations and subscriptions must come from our own origin (Origin, or Sec-Fetch-Site
 *   when the browser sends no Origin, as for same-origin EventSource);
 * - bodies are bounded.
 */
export const MAX_BODY_BYTES = 64 * 1024;

export interface GuardResult {
  ok: boolean;
  status?: number;
  message?: string;
}

export function originAllowed(req: Request, allowedOrigins: readonly string[]): boolean {
  const origin = req.headers.get("origin");
  const host = req.headers.get("host");
  if (origin) {
    if (allowedOrigins.includes(origin)) return true;
    try {
      return host !== null && new URL(origin).host === host;
    } catch {
      return false;
    }
  }
  const site = req.headers.get("sec-fetch-site");
  // no Origin: fine for same-origin navigations/EventSource and non-browser clients
  return site === null || site === "same-origin" || site === "none";
}

export function guardRequest(req: Request, allowedOrigins: readonly string[]): GuardResult {
  const url = new URL(req.url);
  const isSubscription = req.method === "GET" && url.searchParams.has("input") && req.headers.get("accept")?.includes("text/event-stream");
  if (req.method === "POST") {
    const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "application/json") {
      return { ok: false, status: 415, message: "Only application/json requests are accepted." };
    }
    const length = Number(req.headers.get("content-length") ?? "0");
    if (length > MAX_BODY_BYTES) return { ok: false, status: 413, message: `Request body over ${MAX_BODY_BYTES} bytes.` };
  } else if (req.method !== "GET") {
    return { ok: false, status: 405, message: "Method not allowed." };
  }
  if ((req.method === "POST" || isSubscription || req.headers.get("accept")?.includes("text/event-stream")) && !originAllowed(req, allowedOrigins)) {
    return { ok: false, status: 403, message: "Cross-origin request refused." };
  }
  return { ok: true };
}
