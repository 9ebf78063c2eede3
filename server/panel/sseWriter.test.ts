/**
 * The push path of live streams (./sseWriter.ts, ./pushFeed.ts): byte-for-byte what tRPC's own
 * encoder writes for the same items (so @trpc/client reads it unchanged), over the socket as
 * well as the web body; one write per turn of the event loop; a viewer whose socket is full
 * gets nothing more until it drains, then a fresh snapshot; idle viewers get pings.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { initTRPC, tracked } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { preserialized, wireTransformer } from "../contract/wire";
import { eventStreamResponse } from "./eventStream";
import { acceptsPush, PushFeed } from "./pushFeed";
import { runPush, type FrameOut } from "./sseWriter";
import type { PanelContext } from "./trpc";
import { serveWebHandler } from "./webBridge";

const t = initTRPC.context<object>().create({
  transformer: wireTransformer,
  sse: { ping: { enabled: true, intervalMs: 60_000 }, client: { reconnectAfterInactivityMs: 120_000 } },
});
const items = [1, 2, 3].map((n) => ({ id: `h~b-${n}`, data: preserialized({ kind: "gpu", n, text: `"${n}"\n` }) }));

const testRouter = t.router({
  watch: t.procedure.subscription(async function* ({ ctx, signal }) {
    if (!acceptsPush(ctx)) {
      for (const i of items) yield tracked(i.id, i.data);
      return;
    }
    // the feed ends once its items are out: the same stream as the generator above
    const done = new AbortController();
    signal?.addEventListener("abort", () => done.abort());
    yield new PushFeed((push) => {
      for (const i of items) push(i.id, i.data);
      setImmediate(() => setImmediate(() => done.abort()));
      return { resync: () => items[0]!, close: () => undefined };
    }, done.signal) as never;
  }),
});

const URL_ = "http://panel/api/trpc/watch";
const ours = (req: Request) =>
  eventStreamResponse({ router: testRouter, path: "watch", req, url: new URL(req.url), ctx: {} as PanelContext, resHeaders: new Headers() });

describe("the push path", () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((req, res) => void serveWebHandler(req, res, async (r) => ours(new Request(URL_, { signal: r.signal }))));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("writes the same bytes as tRPC's own encoder, in the body and on the socket", async () => {
    const theirs = await (await fetchRequestHandler({ endpoint: "/api/trpc", req: new Request(URL_), router: testRouter, createContext: () => ({}) })).text();
    expect(theirs).toContain("id: h~b-3");
    expect(await ours(new Request(URL_)).text()).toBe(theirs);
    const socket = await new Promise<string>((resolve, reject) => {
      http
        .get({ host: "127.0.0.1", port, path: "/api/trpc/watch" }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => (text += c));
          res.on("end", () => resolve(text));
        })
        .on("error", reject);
    });
    expect(socket).toBe(theirs);
  });
});

describe("the push path behind middleware", () => {
  it("is offered to a procedure whose middleware passes a context of its own (tRPC copies it), as the panel's procedures do", async () => {
    const seen: boolean[] = [];
    // what panelProcedure and signedInProcedure do: next({ ctx: { … } }), so the procedure's ctx is a copy
    const behind = t.procedure.use(({ next }) => next({ ctx: { actor: "a" } })).use(({ next }) => next({ ctx: { more: 1 } }));
    const r = t.router({
      watch: behind.subscription(async function* ({ ctx }) {
        seen.push(acceptsPush(ctx));
        yield* [];
      }),
    });
    const res = eventStreamResponse({
      router: r,
      path: "watch",
      req: new Request(URL_),
      url: new URL(URL_),
      ctx: {} as PanelContext,
      resHeaders: new Headers(),
    });
    await res.text();
    expect(seen).toEqual([true]);
    // a context the panel's encoder never saw is not offered it
    expect(acceptsPush({})).toBe(false);
  });
});

/** A FrameOut recording writes; `full` makes its backlog large until drained. */
function fakeOut() {
  const writes: string[][] = [];
  const raw: (readonly Uint8Array[])[] = [];
  const closed = new AbortController();
  let full = false;
  let drain: (() => void) | null = null;
  const out: FrameOut = {
    write: (chunks) => {
      raw.push(chunks);
      writes.push(chunks.map((c) => new TextDecoder().decode(c)));
    },
    backlog: () => (full ? 10_000_000 : 0),
    drained: () => (full ? new Promise<void>((r) => (drain = r)) : Promise.resolve()),
    closed: closed.signal,
    end: () => undefined,
  };
  return {
    out,
    writes,
    raw,
    closed,
    fill: () => (full = true),
    empty: () => {
      full = false;
      drain?.();
    },
  };
}

const enc = (id: string, data: unknown) => new TextEncoder().encode(`${id}:${String(data)}|`);
const turn = () => new Promise((r) => setImmediate(r));

describe("runPush", () => {
  it("writes what came in one turn of the event loop in one write, and stops when the feed ends", async () => {
    const o = fakeOut();
    const end = new AbortController();
    let push!: (id: string, data: unknown) => void;
    let closed = 0;
    const done = runPush(new PushFeed((p) => ((push = p), { resync: () => ({ id: "s", data: "snap" }), close: () => closed++ }), end.signal), o.out, enc, 0);
    push("1", "a");
    push("2", "b");
    await turn();
    push("3", "c");
    await turn();
    expect(o.writes).toEqual([["1:a|2:b|"], ["3:c|"]]);
    end.abort();
    await done;
    expect(closed).toBe(1);
  });

  it("viewers in the same position share one buffer per turn; one that joined mid-turn or resumed gets its own frames, none twice or cut", async () => {
    // frames encoded once per item, as the panel's encoder does (shared by reference)
    const cache = new Map<string, Uint8Array>();
    const once = (id: string, data: unknown) => {
      let f = cache.get(id);
      if (!f) cache.set(id, (f = enc(id, data)));
      return f;
    };
    const end = new AbortController();
    const viewers = [fakeOut(), fakeOut(), fakeOut(), fakeOut()];
    const pushes: ((id: string, data: unknown) => void)[] = [];
    const done = viewers.map((o) =>
      runPush(new PushFeed((p) => (pushes.push(p), { resync: () => ({ id: "s", data: "snap" }), close: () => undefined }), end.signal), o.out, once, 0),
    );
    const [a, b, late, resumed] = pushes as [
      (id: string, data: unknown) => void,
      (id: string, data: unknown) => void,
      (id: string, data: unknown) => void,
      (id: string, data: unknown) => void,
    ];
    resumed("s", "snap"); // its snapshot first, then live frames like everyone
    for (const [id, data] of [
      ["1", "a"],
      ["2", "b"],
    ] as const)
      for (const p of [a, b, resumed]) p(id, data);
    // `late` joins after frame 2: its snapshot, then frame 3 with everyone
    late("s", "snap");
    for (const p of [a, b, late, resumed]) p("3", "c");
    await turn();
    const [va, vb, vl, vr] = viewers as [ReturnType<typeof fakeOut>, ReturnType<typeof fakeOut>, ReturnType<typeof fakeOut>, ReturnType<typeof fakeOut>];
    expect(va.writes).toEqual([["1:a|2:b|3:c|"]]);
    expect(vb.writes).toEqual([["1:a|2:b|3:c|"]]);
    expect(vl.writes).toEqual([["s:snap|3:c|"]]);
    expect(vr.writes).toEqual([["s:snap|1:a|2:b|3:c|"]]);
    // a and b: the very same bytes, concatenated once
    expect(vb.raw[0]![0]).toBe(va.raw[0]![0]);
    // next turn: everyone in the same position again, one buffer for all four
    for (const p of pushes) p("4", "d");
    await turn();
    const fourth = viewers.map((o) => o.raw[1]![0]);
    expect(new Set(fourth).size).toBe(1);
    expect(new TextDecoder().decode(fourth[0])).toBe("4:d|");
    end.abort();
    await Promise.all(done);
  });

  it("a viewer whose socket is full gets nothing more until it drains, then a fresh snapshot and what comes after", async () => {
    const o = fakeOut();
    const end = new AbortController();
    let push!: (id: string, data: unknown) => void;
    let resyncs = 0;
    const done = runPush(
      new PushFeed((p) => ((push = p), { resync: () => (resyncs++, { id: "s9", data: "snapshot" }), close: () => undefined }), end.signal),
      o.out,
      enc,
      0,
    );
    push("1", "a");
    await turn();
    o.fill();
    for (let i = 2; i < 1000; i++) push(String(i), "x");
    await turn();
    push("1000", "dropped too");
    await turn();
    expect(o.writes).toEqual([["1:a|"]]);
    o.empty();
    await turn();
    push("1001", "live");
    await turn();
    expect(resyncs).toBe(1);
    expect(o.writes.slice(1).flat().join("")).toBe("s9:snapshot|1001:live|");
    end.abort();
    await done;
  });

  it("an idle viewer gets a ping within the interval; a busy one does not", async () => {
    const o = fakeOut();
    const end = new AbortController();
    const done = runPush(new PushFeed(() => ({ resync: () => ({ id: "s", data: "" }), close: () => undefined }), end.signal), o.out, enc, 80);
    await new Promise((r) => setTimeout(r, 200));
    end.abort();
    await done;
    expect(o.writes.length).toBeGreaterThanOrEqual(1);
    expect(o.writes.flat().every((w) => w === "event: ping\ndata: \n\n\n")).toBe(true);
  });

  it("ends when the client goes away", async () => {
    const o = fakeOut();
    const end = new AbortController();
    let closed = false;
    const done = runPush(new PushFeed(() => ({ resync: () => ({ id: "s", data: "" }), close: () => (closed = true) }), end.signal), o.out, enc, 0);
    o.closed.abort();
    await done;
    expect(closed).toBe(true);
  });
});
