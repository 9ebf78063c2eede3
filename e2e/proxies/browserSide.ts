/**
 * Test-only: a browser's side of the panel through a proxy, over node:http(s) so that the
 * connection can go to 127.0.0.1 while Host, Origin and the TLS name say gpudeck.example.com
 * (as they would with DNS pointing there): pages, tRPC mutations as a same-origin tab sends
 * them, and an SSE stream whose events are stamped with when they arrived.
 */
import http from "node:http";
import https from "node:https";
import { decodeSse } from "../../server/panel/panelTestHarness";

export interface Endpoint {
  name: string;
  /** what the browser's address bar says: `https://gpudeck.example.com:8443` */
  origin: string;
  /** where the TCP connection goes */
  port: number;
  /** the certificate to trust (https only) */
  ca?: string;
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function open(ep: Endpoint, pathName: string, method: string, headers: http.OutgoingHttpHeaders): http.ClientRequest {
  const url = new URL(ep.origin);
  const options = { host: "127.0.0.1", port: ep.port, path: pathName, method, headers: { host: url.host, ...headers } };
  return url.protocol === "https:" ? https.request({ ...options, servername: url.hostname, ca: ep.ca }) : http.request(options);
}

export function request(ep: Endpoint, pathName: string, opts: { method?: string; headers?: http.OutgoingHttpHeaders; body?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = open(ep, pathName, opts.method ?? "GET", opts.headers ?? {});
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.setTimeout(15_000, () => req.destroy(new Error(`${ep.name}: no answer to ${pathName} within 15 s`)));
    req.end(opts.body);
  });
}

/** A tRPC mutation as a same-origin tab sends it (Origin, JSON). */
export async function mutate(ep: Endpoint, procedure: string, input: unknown): Promise<{ status: number; message: string | null }> {
  const r = await request(ep, `/api/trpc/${procedure}`, {
    method: "POST",
    headers: { origin: ep.origin, "sec-fetch-site": "same-origin", "content-type": "application/json" },
    body: JSON.stringify(input),
  });
  const json = JSON.parse(r.body) as { error?: { message?: string } };
  return { status: r.status, message: json.error?.message ?? null };
}

export interface Arrival {
  data: string;
  atMs: number;
}

/** An EventSource on events.watch; each event's decoded data with its arrival time (performance.now()). */
export function openStream(ep: Endpoint, input: unknown) {
  const events: Arrival[] = [];
  let status = 0;
  let buffer = "";
  const req = open(ep, `/api/trpc/events.watch?input=${encodeURIComponent(JSON.stringify(input))}`, "GET", {
    accept: "text/event-stream",
    "sec-fetch-site": "same-origin",
  });
  req.on("response", (res) => {
    status = res.statusCode!;
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      const atMs = performance.now();
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = decodeSse(
          block
            .split("\n")
            .filter((l) => l.startsWith("data: "))
            .join("\n"),
        ).replace(/^data: /gm, "");
        if (data) events.push({ data, atMs });
      }
    });
  });
  req.on("error", () => undefined);
  req.end();
  return {
    events,
    status: () => status,
    async until(pattern: RegExp, timeoutMs = 15_000, from = 0): Promise<Arrival> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = events.slice(from).find((e) => pattern.test(e.data));
        if (hit) return hit;
        if (Date.now() > deadline)
          throw new Error(
            `no ${pattern} on the stream through ${ep.name} within ${timeoutMs} ms (status ${status}); last: ${events.at(-1)?.data.slice(0, 300)}`,
          );
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () => req.destroy(),
  };
}

export type Stream = ReturnType<typeof openStream>;

/** For events seen on both streams (same data: one encoding per event), how much later `through` had each than `direct`. */
export function lagsMs(direct: Stream, through: Stream, pattern: RegExp): number[] {
  const first = new Map<string, number>();
  for (const e of direct.events) if (pattern.test(e.data) && !first.has(e.data)) first.set(e.data, e.atMs);
  const lags: number[] = [];
  const seen = new Set<string>();
  for (const e of through.events) {
    const at = first.get(e.data);
    if (at === undefined || seen.has(e.data)) continue;
    seen.add(e.data);
    lags.push(e.atMs - at);
  }
  return lags;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
