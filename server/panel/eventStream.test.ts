/**
 * The panel's SSE encoding of subscriptions must be byte-for-byte what tRPC's own encoder writes
 * for the same procedure (so @trpc/client reads it unchanged), and a real tRPC client over it
 * must get the values, resume by id and see errors as errors.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createTRPCClient, httpSubscriptionLink } from "@trpc/client";
import { initTRPC, tracked, TRPCError } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { EventSource } from "eventsource";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { preserialized, wireTransformer } from "../contract/wire";
import { eventStreamResponse } from "./eventStream";
import type { PanelContext } from "./trpc";
import { serveWebHandler } from "./webBridge";

const t = initTRPC.context<{ user: string | null }>().create({
  transformer: wireTransformer,
  sse: { ping: { enabled: true, intervalMs: 60_000 }, client: { reconnectAfterInactivityMs: 120_000 } },
  // stacks differ by who called (like the panel's, which drops them)
  errorFormatter: ({ shape }) => ({ ...shape, data: { ...shape.data, stack: undefined } }),
});
const signedIn = t.procedure.use(({ ctx, next }) => {
  if (!ctx.user) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in first." });
  return next();
});
const testRouter = t.router({
  count: signedIn.input(z.object({ upTo: z.number().int().max(100), lastEventId: z.string().nullish() }).strict()).subscription(async function* ({ input }) {
    const from = input.lastEventId ? Number(input.lastEventId) + 1 : 1;
    for (let i = from; i <= input.upTo; i++) yield tracked(String(i), preserialized({ n: i, text: `line "${i}"\n` }));
  }),
  plain: t.procedure.subscription(async function* () {
    yield { untracked: true };
  }),
  fails: t.procedure.subscription(async function* () {
    yield tracked("1", { ok: true });
    throw new TRPCError({ code: "NOT_FOUND", message: "No such host 'gpu-z'." });
  }),
});

const url = (path: string, input?: unknown) =>
  `http://panel/api/trpc/${path}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`;

/** What tRPC itself answers. */
async function trpcBody(req: Request, user: string | null): Promise<string> {
  const res = await fetchRequestHandler({ endpoint: "/api/trpc", req, router: testRouter, createContext: () => ({ user }) });
  return await res.text();
}

/** What ./eventStream.ts answers. */
function oursResponse(req: Request, user: string | null): Response {
  const u = new URL(req.url);
  const path = u.pathname.slice("/api/trpc/".length);
  return eventStreamResponse({ router: testRouter, path, req, url: u, ctx: { user } as unknown as PanelContext, resHeaders: new Headers(), log: () => {} });
}

describe("the panel's SSE encoding of subscriptions", () => {
  it.each([
    ["tracked values, then return", url("count", { upTo: 3 }), {}, "ada"],
    ["resumed after an id (Last-Event-ID)", url("count", { upTo: 4 }), { "last-event-id": "2" }, "ada"],
    ["refused by middleware (no user)", url("count", { upTo: 3 }), {}, null],
    ["invalid input", url("count", { upTo: 1000 }), {}, "ada"],
    ["an untracked value", url("plain"), {}, "ada"],
    ["an error after a value", url("fails"), {}, "ada"],
  ] as const)("%s: the same bytes as tRPC's own encoder", async (_what, u, headers, user) => {
    const theirs = await trpcBody(new Request(u, { headers }), user);
    const ours = await oursResponse(new Request(u, { headers }), user).text();
    expect(ours).toBe(theirs);
  });

  it("answers with tRPC's SSE headers", () => {
    const res = oursResponse(new Request(url("count", { upTo: 1 })), "ada");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(res.headers.get("cache-control")).toBe("no-cache, no-transform");
    expect(res.headers.get("x-accel-buffering")).toBe("no");
  });

  it("encodes an event shared by many viewers once: the same bytes for each", async () => {
    const shared = preserialized({ big: "x".repeat(10_000) });
    const one = t.router({
      watch: t.procedure.subscription(async function* () {
        yield tracked("7", shared);
      }),
    });
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < 3; i++) {
      const res = eventStreamResponse({
        router: one,
        path: "watch",
        req: new Request(url("watch")),
        url: new URL(url("watch")),
        ctx: {} as PanelContext,
        resHeaders: new Headers(),
      });
      const reader = res.body!.getReader();
      await reader.read(); // connected
      chunks.push((await reader.read()).value!);
      await reader.cancel();
    }
    expect(chunks[1]).toBe(chunks[0]);
    expect(chunks[2]).toBe(chunks[0]);
  });

  it("a client that goes away ends the procedure's generator", async () => {
    let ended = false;
    const forever = t.router({
      watch: t.procedure.subscription(async function* ({ signal }) {
        try {
          for (let i = 1; !signal?.aborted; i++) {
            yield tracked(String(i), { i });
            await new Promise((r) => setTimeout(r, 5));
          }
        } finally {
          ended = true;
        }
      }),
    });
    const ctl = new AbortController();
    const req = new Request(url("watch"), { signal: ctl.signal });
    const res = eventStreamResponse({ router: forever, path: "watch", req, url: new URL(req.url), ctx: {} as PanelContext, resHeaders: new Headers() });
    const reader = res.body!.getReader();
    for (let i = 0; i < 4; i++) await reader.read();
    ctl.abort();
    await reader.cancel();
    await expect.poll(() => ended, { timeout: 2000 }).toBe(true);
  });

  describe("read by the real tRPC client over HTTP", () => {
    let server: http.Server;
    let base: string;
    beforeAll(async () => {
      server = http.createServer((req, res) => {
        void serveWebHandler(req, res, async (r) => oursResponse(new Request(r.url.replace(/^http:\/\/[^/]+/, "http://panel"), r), "ada"));
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/trpc`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    const client = () => createTRPCClient<typeof testRouter>({ links: [httpSubscriptionLink({ url: base, transformer: wireTransformer, EventSource })] });

    it("gets each value with its id, in order, the preserialized ones as values", async () => {
      const got: { id: string; n: number; text: string }[] = [];
      await new Promise<void>((resolve, reject) => {
        const sub = client().count.subscribe(
          { upTo: 3 },
          {
            onData: (d) => {
              got.push({ id: d.id, n: d.data.n, text: d.data.text });
              if (got.length === 3) {
                sub.unsubscribe();
                resolve();
              }
            },
            onError: reject,
          },
        );
      });
      expect(got).toEqual([1, 2, 3].map((n) => ({ id: String(n), n, text: `line "${n}"\n` })));
    });

    it("sees an error the procedure throws as a TRPCClientError with its code and message", async () => {
      const err = await new Promise<unknown>((resolve) => {
        const sub = client().fails.subscribe(undefined, { onError: (e) => (sub.unsubscribe(), resolve(e)) });
      });
      expect(err).toMatchObject({ message: "No such host 'gpu-z'.", data: { code: "NOT_FOUND" } });
    });
  });
});
