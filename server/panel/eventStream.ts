/**
 * The SSE encoding of the panel's subscriptions (`events.watch` and every other one), in tRPC's
 * own wire format, one web stream deep. The procedure still runs through tRPC
 * (`callTRPCProcedure`: the same context, middleware, input parsing and async generator yielding
 * `tracked(id, …)`); only the encoding of its items into SSE frames is done here.
 *
 * Why not tRPC's sseStreamProducer: it sends every item through an async-generator wrapper, a
 * ReadableStream, a TransformStream writing each field as its own chunk and a TextEncoderStream,
 * per viewer: with 500 viewers that pipeline alone kept the panel's core busy and viewers could
 * not even connect (bench/fanout.ts). Here a frame is encoded once per event and the same bytes
 * go to every viewer of it (fan-out items are shared by reference), and each viewer's stream
 * is one ReadableStream pulled by the socket.
 *
 * A procedure that yields a PushFeed (./pushFeed.ts: `events.watch`) is pushed from then on:
 * the fleet hub hands each frame to the viewer's writer (./sseWriter.ts), which writes straight
 * to the socket when ./webBridge.ts serves the request (`directStreamOf`), or into the body.
 *
 * Wire format (as @trpc/server 11's sse.ts writes it, so its httpSubscriptionLink reads it
 * unchanged): `event: connected` with the client options first; each item `data: <JSON>` plus
 * `id: <id>` when tracked; `event: ping` after intervalMs without anything sent; `event: return`
 * when the generator ends; `event: serialized-error` with the formatted error shape on failure.
 */
import { callTRPCProcedure, getErrorShape, getTRPCErrorFromUnknown, isTrackedEnvelope, TRPCError } from "@trpc/server";
import type { PanelContext } from "./trpc";
import type { AnyTRPCRouter } from "@trpc/server";
import { acceptPush, PushFeed } from "./pushFeed";
import { runPush, type FrameOut } from "./sseWriter";

export interface EventStreamOptions {
  router: AnyTRPCRouter;
  path: string;
  req: Request;
  url: URL;
  /** the panel's context for this request (after createContext); null when making it failed */
  ctx: PanelContext | null;
  /** why there is no context (it threw) */
  contextError?: unknown;
  /** headers the context set (a refreshed session cookie) */
  resHeaders: Headers;
  log?: (msg: string) => void;
}

/** What tRPC sets on an SSE response. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "Content-Type": "text/event-stream",
  "Cache-Control": "no-cache, no-transform",
  "X-Accel-Buffering": "no",
  Connection: "keep-alive",
};

const encoder = new TextEncoder();
const frame = (text: string): Uint8Array => encoder.encode(text);

/** The last event id a reconnecting client sends, where tRPC looks for it. */
function lastEventIdOf(req: Request, url: URL): string | null {
  const id = req.headers.get("last-event-id") ?? url.searchParams.get("lastEventId") ?? url.searchParams.get("Last-Event-Id");
  return id && !/[\0\n\r]/.test(id) ? id : null;
}

/** Encoded `data:`/`id:` frames by the item's data object: one encoding for every viewer of it. */
const framesByData = new WeakMap<object, { id: string; bytes: Uint8Array }>();

function dataFrame(id: string | undefined, data: unknown, serialize: (v: unknown) => unknown): Uint8Array {
  const cacheable = id !== undefined && typeof data === "object" && data !== null;
  if (cacheable) {
    const hit = framesByData.get(data);
    if (hit && hit.id === id) return hit.bytes;
  }
  const bytes = frame(`data: ${JSON.stringify(serialize(data))}\n${id !== undefined ? `id: ${id}\n` : ""}\n\n`);
  if (cacheable) framesByData.set(data, { id, bytes });
  return bytes;
}

/** A stream answering one subscription call, in tRPC's SSE format. */
export function eventStreamResponse(opts: EventStreamOptions): Response {
  const { router, path, req, url, ctx } = opts;
  const config = router._def._config;
  const serialize = (v: unknown) => config.transformer.output.serialize(v);
  const pingMs = config.sse?.ping?.enabled ? (config.sse.ping.intervalMs ?? 1000) : 0;
  const signal = req.signal;
  let input: unknown = undefined;

  async function* frames(): AsyncGenerator<Uint8Array | PushFeed> {
    yield frame(`event: connected\ndata: ${JSON.stringify(config.sse?.client ?? {})}\n\n\n`);
    let iterator: AsyncIterator<unknown> | null = null;
    try {
      if (!ctx) throw opts.contextError ?? new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: "no context" });
      const raw = url.searchParams.get("input");
      try {
        input = raw === null ? undefined : config.transformer.input.deserialize(JSON.parse(raw));
      } catch (cause) {
        throw new TRPCError({ code: "PARSE_ERROR", message: "The input is not valid JSON.", cause });
      }
      const lastEventId = lastEventIdOf(req, url);
      if (lastEventId) input = typeof input === "object" && input !== null ? { ...input, lastEventId } : (input ?? { lastEventId });
      const result = await callTRPCProcedure({ router, path, getRawInput: async () => input, ctx, type: "subscription", signal, batchIndex: 0 });
      if (!result || typeof (result as AsyncIterable<unknown>)[Symbol.asyncIterator] !== "function") {
        throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: `Subscription ${path} did not return an AsyncGenerator` });
      }
      iterator = (result as AsyncIterable<unknown>)[Symbol.asyncIterator]();
      let lastId: string | null = lastEventIdOf(req, url);
      // the next value is asked for before the frame of this one is sent; if the client goes away
      // meanwhile, that call may still fail (its session ended): handled, not an unhandled rejection
      const ask = (it: AsyncIterator<unknown>) => {
        const p = it.next();
        p.catch(() => undefined);
        return p;
      };
      let pending = ask(iterator);
      for (;;) {
        const step = pingMs > 0 ? await raceWithPing(pending, pingMs) : await pending;
        if (step === PING) {
          yield frame("event: ping\ndata: \n\n\n");
          continue;
        }
        if (step.done) break;
        const value = step.value;
        if (value instanceof PushFeed) {
          // the procedure pushes from here on (./sseWriter.ts); it is resumed once the feed ends
          yield value;
          pending = ask(iterator);
          continue;
        }
        pending = ask(iterator);
        if (isTrackedEnvelope(value)) {
          lastId = value[0];
          yield dataFrame(value[0], value[1], serialize);
        } else if (lastId === null) {
          yield dataFrame(undefined, value, serialize);
        } else {
          yield frame(`data: ${JSON.stringify(serialize(value))}\nid: \n\n\nevent: restore-id\ndata: \nid: ${lastId}\n\n\n`);
        }
      }
      iterator = null;
      yield frame("event: return\ndata: \n\n\n");
    } catch (cause) {
      if (signal.aborted) return;
      const error = getTRPCErrorFromUnknown(cause);
      if (error.code === "INTERNAL_SERVER_ERROR") (opts.log ?? console.error)(`[panel] ${path}: ${error.message}`);
      const shape = getErrorShape({ config, ctx: ctx ?? undefined, error, input, path, type: "subscription" });
      yield frame(`event: serialized-error\ndata: ${JSON.stringify(serialize(shape))}\n\n\n`);
    } finally {
      // the client went away (or we stopped early): end the procedure's generator
      if (iterator?.return) await iterator.return(undefined).catch(() => undefined);
    }
  }

  if (ctx) acceptPush(ctx);
  const gen = frames();
  const encode = (id: string, data: unknown) => dataFrame(id, data, serialize);
  let started = false;
  /** Run the stream into `out` (once: the socket, or the body when it is read instead). */
  const run = async (out: FrameOut): Promise<void> => {
    try {
      for (;;) {
        const next = await gen.next();
        if (next.done) break;
        const value = next.value;
        if (value instanceof PushFeed) await runPush(value, out, encode, pingMs);
        else {
          out.write([value]);
          // the next frame is made once this one is taken (a slow client holds one frame, not a queue)
          if (out.backlog() > 0) await out.drained();
        }
        if (out.closed.aborted) break;
      }
    } catch {
      // the procedure's errors are frames already; this is the client gone mid-write
    } finally {
      if (out.closed.aborted) await gen.return(undefined).catch(() => undefined);
      out.end();
    }
  };
  const begin = (out: FrameOut): Promise<void> | null => {
    if (started) return null;
    started = true;
    return run(out);
  };
  const body = bodyStream(begin);
  const headers = new Headers(opts.resHeaders);
  for (const [k, v] of Object.entries(SSE_HEADERS)) headers.set(k, v);
  const response = new Response(body, { status: 200, headers });
  Object.defineProperty(response, DIRECT, { value: begin });
  return response;
}

const DIRECT = Symbol("gpudeck.sse.direct");

/**
 * The stream of an eventStreamResponse, to be written straight to a socket (./webBridge.ts)
 * instead of read from its body; null for any other Response or once its body is being read.
 */
export function directStreamOf(res: Response): ((out: FrameOut) => Promise<void> | null) | null {
  const begin = (res as unknown as Record<symbol, unknown>)[DIRECT];
  return typeof begin === "function" ? (begin as (out: FrameOut) => Promise<void> | null) : null;
}

/** The Response body: a FrameOut over a web ReadableStream, run when it is first read. */
function bodyStream(begin: (out: FrameOut) => Promise<void> | null): ReadableStream<Uint8Array> {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let waiters: (() => void)[] = [];
  let ended = false;
  const closed = new AbortController();
  const wake = () => {
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };
  const out: FrameOut = {
    write(chunks) {
      if (ended || closed.signal.aborted) return;
      for (const c of chunks) controller.enqueue(c);
    },
    backlog: () => Math.max(0, -(controller.desiredSize ?? 0)),
    drained: () => (out.backlog() === 0 || closed.signal.aborted ? Promise.resolve() : new Promise<void>((r) => waiters.push(r))),
    closed: closed.signal,
    end() {
      if (ended) return;
      ended = true;
      if (!closed.signal.aborted) controller.close();
    },
  };
  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      pull() {
        void begin(out);
        wake();
      },
      cancel() {
        closed.abort();
        wake();
      },
    },
    { highWaterMark: 0, size: (chunk) => chunk.byteLength },
  );
}

const PING = Symbol("ping");

/**
 * One shared ticker for every stream's pings (no timer per event per viewer): every stream
 * waiting when it fires sends a ping, so no stream goes intervalMs without a frame (a busy one
 * may get a ping between events, which the client ignores).
 */
const tickers = new Map<number, { promise: Promise<typeof PING>; timer: ReturnType<typeof setTimeout> | null; waiting: number }>();

function nextTick(intervalMs: number): { promise: Promise<typeof PING>; release: () => void } {
  let t = tickers.get(intervalMs);
  if (!t) {
    let resolve!: (v: typeof PING) => void;
    const promise = new Promise<typeof PING>((r) => (resolve = r));
    const timer = setTimeout(() => {
      tickers.delete(intervalMs);
      resolve(PING);
    }, intervalMs);
    timer.unref?.();
    t = { promise, timer, waiting: 0 };
    tickers.set(intervalMs, t);
  }
  t.waiting++;
  const ticker = t;
  return {
    promise: ticker.promise,
    release: () => {
      ticker.waiting--;
      if (ticker.waiting === 0 && ticker.timer && tickers.get(intervalMs) === ticker) {
        clearTimeout(ticker.timer);
        tickers.delete(intervalMs);
      }
    },
  };
}

async function raceWithPing<T>(pending: Promise<IteratorResult<T>>, intervalMs: number): Promise<IteratorResult<T> | typeof PING> {
  const tick = nextTick(intervalMs);
  try {
    return await Promise.race([pending, tick.promise]);
  } finally {
    tick.release();
  }
}
