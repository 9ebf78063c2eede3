import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { serveWebHandler } from "./webBridge";

let server: http.Server | null = null;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

async function serve(handle: (req: Request) => Promise<Response>): Promise<string> {
  server = http.createServer((req, res) => void serveWebHandler(req, res, handle));
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("the API served from node:http to the panel's web handler", () => {
  it("passes method, path, query, headers and the body; answers with status, headers, every Set-Cookie and the security headers", async () => {
    const base = await serve(async (req) => {
      const body = await req.text();
      const headers = new Headers({ "content-type": "application/json" });
      headers.append("set-cookie", "a=1; Path=/");
      headers.append("set-cookie", "b=2; Path=/");
      return new Response(JSON.stringify({ method: req.method, url: req.url, origin: req.headers.get("origin"), body }), { status: 201, headers });
    });
    const res = await fetch(`${base}/api/trpc/session.login?x=1`, { method: "POST", headers: { origin: "http://panel.example" }, body: '{"user":"ada"}' });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({
      method: "POST",
      url: expect.stringMatching(/\/api\/trpc\/session\.login\?x=1$/),
      origin: "http://panel.example",
      body: '{"user":"ada"}',
    });
    expect(res.headers.getSetCookie()).toEqual(["a=1; Path=/", "b=2; Path=/"]);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("streams the body as it comes, and a client that goes away aborts the request and cancels the body", async () => {
    let aborted = false;
    let canceled = false;
    const base = await serve(async (req) => {
      req.signal.addEventListener("abort", () => (aborted = true));
      let i = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(c) {
          await new Promise((r) => setTimeout(r, 10));
          c.enqueue(new TextEncoder().encode(`data: ${i++}\n\n`));
        },
        cancel: () => void (canceled = true),
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
    const ctl = new AbortController();
    const res = await fetch(`${base}/api/trpc/events.watch`, { signal: ctl.signal });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toBe("data: 0\n\n");
    ctl.abort();
    await expect.poll(() => aborted && canceled, { timeout: 2000 }).toBe(true);
  });
});
