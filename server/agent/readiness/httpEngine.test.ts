import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpGet } from "./httpEngine";

describe("the real engine probe (fetch, loopback only)", () => {
  let server: http.Server;
  let url: string;
  const hung: http.ServerResponse[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === "/health") res.writeHead(503, { "content-type": "application/json" }).end('{"error":{"code":503,"message":"Loading model"}}');
      else if (req.url === "/big") res.writeHead(200).end("x".repeat(100_000));
      else if (req.url === "/redirect") res.writeHead(302, { location: "http://example.com/" }).end();
      else if (req.url === "/hang") hung.push(res);
      else res.writeHead(200).end("ok");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const res of hung) res.destroy();
    await new Promise((r) => server.close(r));
  });

  it("answers with status and body, cut at the limit; redirects are not followed", async () => {
    expect(await httpGet({ unit: "u", url: `${url}/health`, timeoutMs: 2000 })).toEqual({
      kind: "response",
      status: 503,
      body: '{"error":{"code":503,"message":"Loading model"}}',
    });
    const big = await httpGet({ unit: "u", url: `${url}/big`, timeoutMs: 2000, maxBytes: 1000 });
    expect(big.kind === "response" && big.body.length).toBe(1000);
    expect(await httpGet({ unit: "u", url: `${url}/redirect`, timeoutMs: 2000 })).toMatchObject({ kind: "response", status: 302 });
  });

  it("refused, timed out, cancelled", async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(await httpGet({ unit: "u", url: `http://127.0.0.1:${port}/health`, timeoutMs: 2000 })).toEqual({ kind: "refused", message: "connection refused" });
    expect(await httpGet({ unit: "u", url: `${url}/hang`, timeoutMs: 200 })).toEqual({ kind: "timeout", message: "no answer within 200 ms" });
    const ctl = new AbortController();
    const pending = httpGet({ unit: "u", url: `${url}/hang`, timeoutMs: 5000, signal: ctl.signal });
    ctl.abort();
    expect(await pending).toEqual({ kind: "error", message: "probe cancelled" });
  });

  it("never sends anything to another machine", async () => {
    expect(await httpGet({ unit: "u", url: "http://10.255.0.1:8000/health", timeoutMs: 200 })).toEqual({
      kind: "error",
      message: "not probed: 10.255.0.1:8000 is not a loopback or host-local address",
    });
    expect((await httpGet({ unit: "u", url: "http://metadata.google.internal/", timeoutMs: 200 })).kind).toBe("error");
    expect((await httpGet({ unit: "u", url: "file:///etc/passwd", timeoutMs: 200 })).kind).toBe("error");
  });
});
