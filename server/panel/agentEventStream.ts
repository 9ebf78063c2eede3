/**
 * The panel's one live stream per agent (`events.watch`), read without tRPC's client
 * subscription machinery: one fetch through the agent's guarded dispatcher (../egress, TLS pin),
 * its SSE body parsed in place, each event JSON.parsed once. At hundreds of agents the tRPC
 * client's observables, EventSource and per-event promise chain cost more than the events
 * themselves (bench/ingest.ts). The wire is the one tRPC's httpSubscriptionLink reads (as
 * server/panel/eventStream.ts writes it): `event: connected` with the client options, `data:` +
 * `id:` per event, `event: ping`, `event: return` when the stream ends, `event: serialized-error`
 * with the error's shape.
 */
import type { Actor } from "../contract/actors";
import type { AgentEvent } from "../contract/events";
import { wireTransformer } from "../contract/wire";
import { encodeActor, type AgentConnection } from "./agentClient";
import { agentFetch } from "./agentTls";

export interface AgentStreamHandlers {
  onData(id: string, event: AgentEvent): void;
  /** the stream failed (the caller reconnects); errors carry `code` = the HTTP status when there was one */
  onError(err: unknown): void;
  /** the agent ended the stream */
  onComplete(): void;
}

/** An error the agent sent on the stream (its tRPC error shape), or an HTTP refusal. */
export class AgentStreamError extends Error {
  constructor(
    message: string,
    /** the HTTP status (401, 503 …) where known */
    readonly code: number | null,
    readonly data: unknown = null,
  ) {
    super(message);
    this.name = "AgentStreamError";
  }
}

/** No byte for this long (the agent pings every few seconds): the stream is dead, reconnect. */
const DEFAULT_INACTIVITY_MS = 25_000;

/** The SSE parser for one stream: whole messages out of the chunks as they come. */
export class SseBlocks {
  private buf = "";
  private cr = false;
  constructor(private readonly onMessage: (event: string | null, data: string | null, id: string | null) => void) {}

  feed(text: string): void {
    let chunk = text;
    if (this.cr || chunk.includes("\r")) {
      // CRLF or CR line ends (a "\r" at a chunk's end may be the first half of a CRLF)
      chunk = (this.cr ? "\r" : "") + chunk;
      this.cr = chunk.endsWith("\r");
      if (this.cr) chunk = chunk.slice(0, -1);
      chunk = chunk.replace(/\r\n?/g, "\n");
    }
    this.buf = this.buf.length === 0 ? chunk : this.buf + chunk;
    let start = 0;
    for (;;) {
      const end = this.buf.indexOf("\n\n", start);
      if (end < 0) break;
      if (end > start) this.block(this.buf.slice(start, end));
      start = end + 2;
    }
    this.buf = start === 0 ? this.buf : this.buf.slice(start);
  }

  private block(block: string): void {
    let event: string | null = null;
    let data: string | null = null;
    let id: string | null = null;
    let at = 0;
    while (at < block.length) {
      let nl = block.indexOf("\n", at);
      if (nl < 0) nl = block.length;
      const line = block.slice(at, nl);
      at = nl + 1;
      if (line.length === 0 || line.charCodeAt(0) === 58) continue; // blank, or a comment
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + (line.charCodeAt(colon + 1) === 32 ? 2 : 1));
      if (field === "data") data = data === null ? value : `${data}\n${value}`;
      else if (field === "id") id = value;
      else if (field === "event") event = value;
    }
    if (data !== null || event !== null) this.onMessage(event, data, id);
  }
}

/**
 * Open `events.watch` on the agent, resuming after `lastEventId`; handlers get each event. One
 * of onError/onComplete ends it; close() ends it quietly. `conn.fetch`: the agent's guarded
 * fetch (agentFetch), made once per host; made here when not given.
 */
export function openAgentEventStream(
  conn: AgentConnection & { fetch?: typeof fetch },
  lastEventId: string | null,
  actor: Actor,
  h: AgentStreamHandlers,
): { close(): void } {
  const abort = new AbortController();
  let done = false;
  let lastByteAt = Date.now();
  let inactivityMs = DEFAULT_INACTIVITY_MS;
  const finish = (fn: () => void) => {
    if (done) return;
    done = true;
    clearInterval(watchdog);
    abort.abort();
    fn();
  };
  const watchdog = setInterval(() => {
    if (Date.now() - lastByteAt > inactivityMs)
      finish(() => h.onError(new AgentStreamError(`the agent's event stream sent nothing for ${Math.round(inactivityMs / 1000)} s`, null)));
  }, 5_000);
  watchdog.unref?.();

  const parser = new SseBlocks((event, data, id) => {
    if (done) return;
    if (event === null) {
      if (data === null || id === null) return;
      let value: unknown;
      try {
        value = wireTransformer.deserialize(JSON.parse(data));
      } catch {
        return finish(() => h.onError(new AgentStreamError("the agent sent an event that is not JSON", null)));
      }
      h.onData(id, value as AgentEvent);
    } else if (event === "connected") {
      const ms = (safeJson(data) as { reconnectAfterInactivityMs?: unknown } | null)?.reconnectAfterInactivityMs;
      if (typeof ms === "number" && ms > 0) inactivityMs = ms;
    } else if (event === "return") {
      finish(() => h.onComplete());
    } else if (event === "serialized-error") {
      const shape = wireTransformer.deserialize(safeJson(data)) as { message?: string; data?: { httpStatus?: number } } | null;
      finish(() => h.onError(new AgentStreamError(shape?.message ?? "the agent's stream failed", shape?.data?.httpStatus ?? null, shape?.data ?? null)));
    }
    // ping: only keeps the watchdog quiet
  });

  void (async () => {
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (conn.token) headers.authorization = `Bearer ${conn.token}`;
    const who = encodeActor(actor);
    if (who) headers["x-gpudeck-actor"] = who;
    if (lastEventId) headers["last-event-id"] = lastEventId;
    const input = encodeURIComponent(JSON.stringify(wireTransformer.serialize({ lastEventId })));
    const res = await (conn.fetch ?? agentFetch(conn.tls ?? null))(`${conn.url}/trpc/events.watch?input=${input}`, { headers, signal: abort.signal });
    if (res.status !== 200 || !res.body) {
      const text = await res.text().catch(() => "");
      const message = (safeJson(text) as { error?: { message?: string } } | null)?.error?.message;
      throw new AgentStreamError(`the agent answered HTTP ${res.status}${message ? `: ${message}` : ""}`, res.status);
    }
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) break;
      lastByteAt = Date.now();
      parser.feed(value);
      if (done) return void reader.cancel().catch(() => undefined);
    }
    finish(() => h.onError(new AgentStreamError("the agent closed the event stream", null)));
  })().catch((err: unknown) => {
    if (abort.signal.aborted && done) return;
    finish(() => h.onError(err));
  });

  return { close: () => finish(() => undefined) };
}

function safeJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
