/**
 * The push-based writer of a viewer's live stream (events.watch): the fleet hub hands each
 * event's frame (encoded once, shared by every viewer of it) straight to each viewer's writer,
 * which collects what came in one turn of the event loop and writes it to the socket as one
 * buffer (one HTTP chunk). Viewers in the same position get the same frames in the same order
 * in a turn (every viewer of a scope, but one just connected, resumed or resynced): their frames
 * are concatenated once and the one buffer is shared by all of them (`Run`); a viewer whose
 * frames differ has its own. No async generator, promise or web stream per viewer per event.
 * Bounded: a viewer whose socket holds more than VIEWER_BACKLOG_BYTES unsent is behind; what
 * waits for it is dropped, and once its socket drains it gets a fresh snapshot and goes on
 * (the resume semantics of the queue it replaces: a slow client never costs unbounded memory).
 * A viewer idle for the ping interval gets `event: ping` from one shared timer.
 */
import type { PushFeed, PushSubscription } from "./pushFeed";

/** Where a stream's bytes go: the socket (./webBridge.ts) or a web ReadableStream (Next's route, tests). */
export interface FrameOut {
  write(chunks: readonly Uint8Array[]): void;
  /** bytes written and not yet taken by the client */
  backlog(): number;
  /** resolves once the backlog is taken (or the client is gone) */
  drained(): Promise<void>;
  /** the client went away */
  readonly closed: AbortSignal;
  end(): void;
}

/** Unsent bytes a viewer's socket may hold before it is treated as behind (it then gets a fresh snapshot). */
export const VIEWER_BACKLOG_BYTES = 256 * 1024;

type Encode = (id: string, data: unknown) => Uint8Array;

/**
 * The frames a writer was pushed this turn, as a path in a tree shared by every writer: a writer
 * pushed the same frames (by reference) in the same order as another is at the same node, and
 * the node's bytes (its frames concatenated) are made once for all of them. A node is only ever
 * its own frame sequence, so sharing cannot mix viewers' frames; the tree is begun anew each turn.
 */
class Run {
  private nextFrame: Uint8Array | null = null;
  private nextRun: Run | null = null;
  private more: Map<Uint8Array, Run> | null = null;
  private joined: Uint8Array | null = null;

  constructor(
    private readonly parent: Run | null,
    private readonly frame: Uint8Array | null,
    private readonly byteLength: number,
  ) {}

  then(frame: Uint8Array): Run {
    if (this.nextFrame === frame) return this.nextRun!;
    const hit = this.more?.get(frame);
    if (hit) return hit;
    const run = new Run(this, frame, this.byteLength + frame.byteLength);
    if (this.nextRun === null) {
      this.nextFrame = frame;
      this.nextRun = run;
    } else (this.more ??= new Map()).set(frame, run);
    return run;
  }

  bytes(): Uint8Array {
    if (this.joined) return this.joined;
    if (this.parent?.frame === null) return (this.joined = this.frame!);
    const buf = new Uint8Array(this.byteLength);
    let end = this.byteLength - this.frame!.byteLength;
    buf.set(this.frame!, end);
    for (let r = this.parent; r?.frame; r = r.parent) {
      end -= r.frame.byteLength;
      buf.set(r.frame, end);
    }
    return (this.joined = buf);
  }
}

let turnRoot = new Run(null, null, 0);

class PushWriter {
  /** what waits to be sent (null: nothing) */
  pending: Run | null = null;
  lastWriteMs = Date.now();
  behind = false;
  sub: PushSubscription | null = null;

  constructor(
    readonly out: FrameOut,
    private readonly encode: Encode,
    private readonly limit: number,
  ) {}

  push(id: string, data: unknown): void {
    if (this.behind) return;
    const first = this.pending === null;
    this.pending = (this.pending ?? turnRoot).then(this.encode(id, data));
    if (first) schedule(this);
  }

  flush(): void {
    if (this.pending === null || this.out.closed.aborted) {
      this.pending = null;
      return;
    }
    if (this.out.backlog() > this.limit) return this.fellBehind();
    const run = this.pending;
    this.pending = null;
    this.lastWriteMs = Date.now();
    this.out.write([run.bytes()]);
  }

  private fellBehind(): void {
    this.pending = null;
    this.behind = true;
    void this.out.drained().then(() => {
      if (!this.sub || this.out.closed.aborted) return;
      this.behind = false;
      const fresh = this.sub.resync();
      this.push(fresh.id, fresh.data);
    });
  }

  ping(frame: Uint8Array): void {
    if (this.behind || this.out.closed.aborted) return;
    this.lastWriteMs = Date.now();
    this.out.write([frame]);
  }
}

// --- one flush per turn of the event loop, for every writer with something to send -------

let dirty: PushWriter[] = [];
let flushing = false;

function schedule(w: PushWriter): void {
  dirty.push(w);
  if (flushing) return;
  flushing = true;
  setImmediate(() => {
    flushing = false;
    const now = dirty;
    dirty = [];
    // what is pushed from here on is next turn's (the writers below hold this turn's runs)
    turnRoot = new Run(null, null, 0);
    for (const writer of now) writer.flush();
  });
}

// --- pings: one timer per interval for every writer -----------------------------------------

const pingers = new Map<number, { writers: Set<PushWriter>; timer: ReturnType<typeof setInterval> }>();
const PING_FRAME = new TextEncoder().encode("event: ping\ndata: \n\n\n");

function addPinged(w: PushWriter, intervalMs: number): () => void {
  let p = pingers.get(intervalMs);
  if (!p) {
    const writers = new Set<PushWriter>();
    // checked twice an interval: nobody goes an interval without a frame
    const timer = setInterval(() => {
      const idleSince = Date.now() - intervalMs / 2;
      for (const x of writers) if (x.lastWriteMs <= idleSince) x.ping(PING_FRAME);
    }, intervalMs / 2);
    timer.unref?.();
    pingers.set(intervalMs, (p = { writers, timer }));
  }
  const entry = p;
  entry.writers.add(w);
  return () => {
    entry.writers.delete(w);
    if (entry.writers.size === 0 && pingers.get(intervalMs) === entry) {
      clearInterval(entry.timer);
      pingers.delete(intervalMs);
    }
  };
}

/**
 * Push `feed` to `out` until the feed's signal aborts or the client goes away. Resolves then
 * (the caller ends the stream as the procedure says).
 */
export async function runPush(feed: PushFeed, out: FrameOut, encode: Encode, pingMs: number, limit = VIEWER_BACKLOG_BYTES): Promise<void> {
  if (feed.signal.aborted || out.closed.aborted) return;
  const writer = new PushWriter(out, encode, limit);
  const unping = pingMs > 0 ? addPinged(writer, pingMs) : () => undefined;
  let stop!: () => void;
  const done = new Promise<void>((r) => (stop = r));
  feed.signal.addEventListener("abort", stop, { once: true });
  out.closed.addEventListener("abort", stop, { once: true });
  try {
    writer.sub = feed.attach((id, data) => writer.push(id, data));
    await done;
  } finally {
    feed.signal.removeEventListener("abort", stop);
    out.closed.removeEventListener("abort", stop);
    unping();
    writer.sub?.close();
    writer.sub = null;
    // what waited is sent before the stream's last frame (an error or return)
    writer.flush();
  }
}

/** A FrameOut over a node:http response (the panel's server, ./webBridge.ts). */
export function socketOut(res: {
  write(chunk: Uint8Array): boolean;
  cork(): void;
  uncork(): void;
  end(): void;
  readonly writableLength: number;
  readonly writableNeedDrain: boolean;
  once(event: "drain" | "close", fn: () => void): unknown;
  readonly destroyed: boolean;
}): FrameOut {
  const closed = new AbortController();
  res.once("close", () => closed.abort());
  return {
    write(chunks) {
      if (closed.signal.aborted) return;
      if (chunks.length === 1) return void res.write(chunks[0]!);
      res.cork();
      for (const c of chunks) res.write(c);
      res.uncork();
    },
    backlog: () => res.writableLength,
    // 'drain' comes only after a write that returned false (writableNeedDrain)
    drained: () =>
      !res.writableNeedDrain || closed.signal.aborted
        ? Promise.resolve()
        : new Promise<void>((r) => {
            res.once("drain", r);
            res.once("close", r);
          }),
    closed: closed.signal,
    end: () => {
      if (!res.destroyed) res.end();
    },
  };
}
