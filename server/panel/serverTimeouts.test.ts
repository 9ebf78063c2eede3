/**
 * The panel's HTTP server bounds slow clients (headers, bodies, idle sockets) and leaves live
 * streams alone. Short timeouts stand in for the defaults (15 s headers, 30 s request, 120 s idle).
 */
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPanelServer, SERVER_TIMEOUTS, type RequestHandler } from "./serve";

const handler: RequestHandler = (req, res) => {
  if (req.url === "/stream") {
    res.writeHead(200, { "Content-Type": "text/event-stream" });
    const ping = setInterval(() => res.write(": ping\n\n"), 100);
    res.on("close", () => clearInterval(ping));
    return;
  }
  let n = 0;
  req.on("data", (c: Buffer) => (n += c.length));
  req.on("end", () => res.end(`read ${n} bytes`));
};

let server: http.Server;
let port: number;
beforeAll(async () => {
  server = createPanelServer({
    handle: handler,
    panel: null,
    timeouts: { headersMs: 300, requestMs: 500, idleMs: 800, keepAliveMs: 300, checkIntervalMs: 50 },
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((r) => server.close(() => r()));
});

/** Send raw bytes and collect what comes back until the server closes the socket (or 5 s pass). */
function raw(text: string): Promise<{ reply: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(text));
    let reply = "";
    const giveUp = setTimeout(() => {
      socket.destroy();
      resolve({ reply, closedByServer: false });
    }, 5000);
    socket.on("data", (d) => (reply += d.toString()));
    socket.on("close", () => {
      clearTimeout(giveUp);
      resolve({ reply, closedByServer: true });
    });
    socket.on("error", () => undefined);
  });
}

describe("panel server timeouts", () => {
  it("has defaults that bound headers, requests and idle sockets", () => {
    expect(SERVER_TIMEOUTS).toMatchObject({ headersMs: 15_000, requestMs: 30_000, idleMs: 120_000 });
  });

  it("headers that never finish: the socket is closed (408)", async () => {
    const r = await raw("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    expect(r.closedByServer).toBe(true);
    expect(r.reply).toMatch(/^HTTP\/1\.1 408/);
  });

  it("a body that never finishes: the socket is closed (408)", async () => {
    const r = await raw("POST /api/trpc/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{");
    expect(r.closedByServer).toBe(true);
    expect(r.reply).toMatch(/^HTTP\/1\.1 408/);
  });

  it("an idle connection is closed", async () => {
    const r = await raw("");
    expect(r.closedByServer).toBe(true);
  });

  it("a live stream outlasts every one of those timeouts", async () => {
    const got = await new Promise<{ pings: number; open: boolean }>((resolve) => {
      const req = http.get({ host: "127.0.0.1", port, path: "/stream" }, (res) => {
        let pings = 0;
        let open = true;
        res.on("data", () => pings++);
        res.on("close", () => (open = false));
        setTimeout(() => {
          resolve({ pings, open });
          req.destroy();
        }, 2000);
      });
    });
    expect(got.open).toBe(true);
    expect(got.pings).toBeGreaterThan(5);
  });
});
