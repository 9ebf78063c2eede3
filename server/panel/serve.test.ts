/**
 * The panel's own HTTP server, with a stand-in for Next's request handler: the client address
 * header is always the socket's, foreign Host names are refused, page requests without a
 * session go to /login, /healthz answers, and shutdown is quick even with streams open.
 * (./databaseDown.test.ts: /healthz and the pages when PostgreSQL is away.)
 */
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PEER_HEADER } from "./context";
import { addUser, login, startTestPanel, type TestPanel } from "./panelTestHarness";
import { createPanelServer, stopPanelServer, type RequestHandler } from "./serve";

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function request(port: number, path: string, headers: http.OutgoingHttpHeaders = {}, rawHeaders?: string[]): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, method: "GET", headers: rawHeaders ?? { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return (server.address() as AddressInfo).port;
}

/** Stands in for Next: echoes what it was handed. */
const echo: RequestHandler = (req, res) => {
  const peers = req.rawHeaders.filter((_, i) => i % 2 === 0 && req.rawHeaders[i]!.toLowerCase() === PEER_HEADER).length;
  res.writeHead(200, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ peer: req.headers[PEER_HEADER] ?? null, peerHeadersInRaw: peers, url: req.url }));
};

describe("client address", () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = createPanelServer({ handle: echo, panel: null });
    port = await listen(server);
  });
  afterAll(async () => new Promise<void>((r) => server.close(() => r())));

  it("is the socket's peer address when the client sends none", async () => {
    const r = await request(port, "/");
    expect(JSON.parse(r.body)).toMatchObject({ peer: "127.0.0.1", peerHeadersInRaw: 1 });
  });

  it("a forged header is replaced, whatever its case, however often it is sent", async () => {
    const r = await request(port, "/", undefined, [
      "Host",
      `127.0.0.1:${port}`,
      "X-Gpudeck-Peer",
      "10.0.0.5",
      "x-gpudeck-peer",
      "192.168.1.1",
      "X-Forwarded-For",
      "10.0.0.5",
    ]);
    expect(JSON.parse(r.body)).toMatchObject({ peer: "127.0.0.1", peerHeadersInRaw: 1 });
  });
});

describe("host check and sign-in redirect", () => {
  let tp: TestPanel;
  let demo: TestPanel;
  let server: http.Server;
  let demoServer: http.Server;
  let port: number;
  let demoPort: number;
  beforeAll(async () => {
    const noAgent = { url: "http://127.0.0.1:9", token: "unused-token-0123456789abcdefghijklmnopq" };
    tp = await startTestPanel(noAgent, { panel: { background: false } });
    demo = await startTestPanel(noAgent, { env: { GPUDECK_DEMO: "1" }, panel: { background: false } });
    await addUser(tp.panel, "vera", "viewer");
    server = createPanelServer({ handle: echo, panel: tp.panel });
    demoServer = createPanelServer({ handle: echo, panel: demo.panel });
    port = await listen(server);
    demoPort = await listen(demoServer);
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await new Promise<void>((r) => demoServer.close(() => r()));
    await tp.close();
    await demo.close();
  });

  it("refuses a Host that is not one of the panel's names (DNS rebinding)", async () => {
    const r = await request(port, "/", { host: "evil.example:3000" });
    expect(r.status).toBe(421);
    expect(r.body).toMatch(/does not answer to the name 'evil.example'.*GPUDECK_PUBLIC_URL/);
    expect((await request(port, "/", { host: `localhost:${port}` })).status).not.toBe(421);
  });

  it.each([
    ["/", "/login"],
    ["/units/vllm-kimi-k25.service", "/login?next=%2Funits%2Fvllm-kimi-k25.service"],
    ["/audit?unit=a.service", "/login?next=%2Faudit%3Funit%3Da.service"],
    ["/account", "/login?next=%2Faccount"],
  ])("signed out, %s redirects to %s", async (path, location) => {
    const r = await request(port, path);
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe(location);
  });

  it("an ended session's cookie is cleared on the redirect", async () => {
    const r = await request(port, "/gpus", { cookie: `gpudeck_session=${"C".repeat(43)}` });
    expect(r.status).toBe(303);
    expect(String(r.headers["set-cookie"])).toMatch(/gpudeck_session=; Max-Age=0/);
  });

  it.each(["/login", "/login?next=%2Fgpus", "/setup", "/_next/static/chunks/app.js", "/api/status", "/favicon.ico"])(
    "%s is served without a session",
    async (path) => {
      const r = await request(port, path);
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body).url).toBe(path);
    },
  );

  it("/api/trpc/… is answered by the panel's own handler, not Next, with the security headers; a stream too", async () => {
    const r = await request(port, "/api/trpc/session.me", { "sec-fetch-site": "same-origin" });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ result: { data: { user: null } } });
    expect(r.headers["x-content-type-options"]).toBe("nosniff");
    expect(r.headers["cache-control"]).toBe("no-store");
    // a subscription without a session: tRPC's SSE format, the refusal as its error event
    const s = await request(port, `/api/trpc/events.watch?input=${encodeURIComponent(JSON.stringify({ watch: "fleet" }))}`, {
      "sec-fetch-site": "same-origin",
    });
    expect(s.status).toBe(200);
    expect(s.headers["content-type"]).toBe("text/event-stream");
    expect(s.body).toMatch(/^event: connected\ndata: \{"reconnectAfterInactivityMs":25000\}\n\n\nevent: serialized-error\ndata: .*UNAUTHORIZED/s);
  });

  it("with a session, pages are served", async () => {
    const c = await login(tp.panel, "vera");
    const r = await request(port, "/units/vllm-kimi-k25.service", { cookie: c });
    expect(r.status).toBe(200);
  });

  it("demo mode never redirects", async () => {
    expect((await request(demoPort, "/audit")).status).toBe(200);
  });

  it("/healthz answers without a session: the database and the (in-process, on SQLite) event emitter", async () => {
    const r = await request(port, "/healthz");
    expect(r.status).toBe(200);
    expect(r.headers["cache-control"]).toBe("no-store");
    const health = JSON.parse(r.body) as { since?: string; listen: { since: string } };
    expect(health).toEqual({ ok: true, database: { dialect: "sqlite", ok: true }, listen: { ok: true, since: expect.any(String) } });
    expect(Number.isFinite(Date.parse(health.listen.since))).toBe(true);
    // and it is the panel's, not the page handler's
    expect(r.body).not.toContain('"url"');
  });

  it("/healthz answers before the Host check: a load balancer's check with its own Host, or none (HTTP/1.0)", async () => {
    const foreign = await request(port, "/healthz", { host: "backend.lb.internal:3000" });
    expect(foreign.status).toBe(200);
    expect(JSON.parse(foreign.body)).toMatchObject({ ok: true });
    // what HAProxy's `option httpchk GET /healthz` sends
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, "127.0.0.1", () => socket.end("GET /healthz HTTP/1.0\r\n\r\n"));
      let text = "";
      socket.setEncoding("utf8");
      socket.on("data", (c: string) => (text += c));
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 200 /);
    expect(raw).toContain('"ok":true');
    // every other path still needs one of the panel's names
    expect((await request(port, "/healthz/x", { host: "backend.lb.internal:3000" })).status).toBe(421);
    expect((await request(port, "/login", { host: "evil.example" })).status).toBe(421);
  });
});

describe("shutdown", () => {
  it("ends open streams and closes within a second, even when a stream ignores the request to end", async () => {
    const open = new Set<http.ServerResponse>();
    const server = createPanelServer({
      panel: null,
      handle: (req, res) => {
        res.writeHead(200, { "Content-Type": "text/event-stream" });
        res.write(": hello\n\n");
        open.add(res);
      },
    });
    const port = await listen(server);
    const clients = await Promise.all(
      [1, 2, 3].map(
        () =>
          new Promise<http.IncomingMessage>((resolve) => {
            http.get({ host: "127.0.0.1", port, path: "/api/trpc/events.watch" }, resolve);
          }),
      ),
    );
    expect(open.size).toBe(3);
    const ended: string[] = [];
    for (const c of clients) c.on("close", () => ended.push("closed")).resume();
    const t0 = Date.now();
    // endStreams ends only two of them: the third must be cut by the server itself
    await stopPanelServer(server, () => [...open].slice(0, 2).forEach((r) => r.end("event: serialized-error\ndata: {}\n\n")));
    const took = Date.now() - t0;
    expect(took).toBeLessThan(1500);
    await expect.poll(() => ended.length).toBe(3);
    expect(server.listening).toBe(false);
  });
});
