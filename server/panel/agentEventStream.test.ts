import http from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { agentErrorMessage } from "./agentErrors";
import { openAgentEventStream, SseBlocks } from "./agentEventStream";

const ACTOR = { user: "gpudeck-panel", role: "viewer" as const, unitPatterns: [] };

describe("SseBlocks", () => {
  it("reads messages split anywhere across chunks, in tRPC's framing", () => {
    const got: [string | null, string | null, string | null][] = [];
    const p = new SseBlocks((e, d, i) => got.push([e, d, i]));
    const wire =
      'event: connected\ndata: {"reconnectAfterInactivityMs":25000}\n\n\ndata: {"kind":"gpu"}\nid: b-1\n\n\n: comment\n\nevent: ping\ndata: \n\n\ndata: a\r\ndata: b\r\nid: b-2\r\n\r\n';
    for (let i = 0; i < wire.length; i += 7) p.feed(wire.slice(i, i + 7));
    expect(got).toEqual([
      ["connected", '{"reconnectAfterInactivityMs":25000}', null],
      [null, '{"kind":"gpu"}', "b-1"],
      ["ping", "", null],
      [null, "a\nb", "b-2"],
    ]);
  });
});

describe("openAgentEventStream", () => {
  let server: http.Server | null = null;
  afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

  async function serve(handler: http.RequestListener): Promise<string> {
    server = http.createServer(handler);
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", () => r()));
    const a = server.address() as { port: number };
    return `http://127.0.0.1:${a.port}`;
  }

  it("sends the token, the actor and the resume point, and hands over each event with its id", async () => {
    let seen: http.IncomingHttpHeaders = {};
    let url = "";
    const base = await serve((req, res) => {
      seen = req.headers;
      url = req.url ?? "";
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('event: connected\ndata: {}\n\n\ndata: {"kind":"gpu","sample":null}\nid: boot-7\n\n\n');
      res.end("event: return\ndata: \n\n\n");
    });
    const events: [string, unknown][] = [];
    const done = await new Promise<string>((resolve) => {
      openAgentEventStream({ url: base, token: "tok" }, "boot-6", ACTOR, {
        onData: (id, e) => events.push([id, e]),
        onError: (e) => resolve(`error ${(e as Error).message}`),
        onComplete: () => resolve("complete"),
      });
    });
    expect(done).toBe("complete");
    expect(events).toEqual([["boot-7", { kind: "gpu", sample: null }]]);
    expect(seen.authorization).toBe("Bearer tok");
    expect(JSON.parse(Buffer.from(String(seen["x-gpudeck-actor"]), "base64url").toString())).toMatchObject({ user: "gpudeck-panel", role: "viewer" });
    expect(url).toContain(`input=${encodeURIComponent(JSON.stringify({ lastEventId: "boot-6" }))}`);
  });

  it("a refused token is an error that says so (HTTP 401), an error frame carries the agent's message", async () => {
    const base = await serve((req, res) => {
      if (req.headers.authorization !== "Bearer good")
        return void res.writeHead(401, { "content-type": "application/json" }).end('{"error":{"message":"bad token"}}');
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end('event: serialized-error\ndata: {"message":"agent is restarting","data":{"httpStatus":503}}\n\n\n');
    });
    const fail = (token: string) =>
      new Promise<unknown>((resolve) =>
        openAgentEventStream({ url: base, token }, null, ACTOR, { onData: () => undefined, onError: resolve, onComplete: () => resolve("complete") }),
      );
    const refused = await fail("bad");
    expect(agentErrorMessage(refused, { agentUrl: base, tokenSource: "GPUDECK_AGENT_TOKEN" })).toMatch(/refused the panel's bearer token \(HTTP 401\)/);
    const failed = (await fail("good")) as { message: string; code: number };
    expect(failed.message).toBe("agent is restarting");
    expect(failed.code).toBe(503);
  });

  it("an agent that goes away mid-stream is an error (the link reconnects); close() is quiet", async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('data: {"kind":"gpu"}\nid: b-1\n\n\n');
      setTimeout(() => res.destroy(), 50);
    });
    const err = await new Promise<unknown>((resolve) =>
      openAgentEventStream({ url: base, token: null }, null, ACTOR, { onData: () => undefined, onError: resolve, onComplete: () => resolve("complete") }),
    );
    expect(agentErrorMessage(err, { agentUrl: base, tokenSource: "x" })).toMatch(/could not be reached/);
    let called = false;
    const s = openAgentEventStream({ url: base, token: null }, null, ACTOR, {
      onData: () => undefined,
      onError: () => (called = true),
      onComplete: () => (called = true),
    });
    s.close();
    await new Promise((r) => setTimeout(r, 150));
    expect(called).toBe(false);
  });
});
