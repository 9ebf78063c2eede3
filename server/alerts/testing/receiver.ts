/**
 * Test-only: a real HTTP receiver on 127.0.0.1 that records what is POSTed to it, can answer
 * with an error, and can go down and come back on the same port (a receiver that is away).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: unknown;
  atMs: number;
}

export class TestReceiver {
  readonly received: Received[] = [];
  /** the status it answers with (200 unless a test says otherwise) */
  status = 200;
  /** the body it answers with (null: "ok" or "receiver error") */
  answer: string | null = null;
  private server: http.Server | null = null;
  private port = 0;

  async start(port = this.port): Promise<this> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        let json: unknown = null;
        try {
          json = JSON.parse(body);
        } catch {
          json = null;
        }
        this.received.push({ path: req.url ?? "/", headers: req.headers, body, json, atMs: Date.now() });
        res.writeHead(this.status, { "content-type": "text/plain" }).end(this.answer ?? (this.status < 300 ? "ok" : "receiver error"));
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  url(path = "/hook"): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Down: connections are refused until start() again (same port). */
  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }

  /** JSON bodies received so far. */
  payloads<T = Record<string, unknown>>(): T[] {
    return this.received.map((r) => r.json as T);
  }
}
