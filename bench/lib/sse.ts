/**
 * A minimal Server-Sent Events client for the benches (node:http, no EventSource): parses `id:`,
 * `event:` and `data:` lines and hands each message over with the time its bytes arrived. The
 * event's own time is read from the data text without parsing the whole event (a gpu event's
 * first `atMs` is its sample's, a transition's `atUsec` is systemd's timestamp): the load
 * generator must stay cheap so that it measures the server, not itself. Works for plain JSON
 * (an agent) and for the panel's pre-serialized events (a JSON string "\u0000json:{…}" whose
 * quotes arrive escaped).
 */
import http from "node:http";
import { nowMs } from "./stats";

export interface SseMessage {
  id: string | null;
  event: string | null;
  data: string;
  /** when the chunk holding the message's end arrived (ms, Date.now() scale) */
  receivedMs: number;
}

export class SseParser {
  private buf = "";
  private id: string | null = null;
  private event: string | null = null;
  private data: string[] = [];
  constructor(private readonly onMessage: (m: SseMessage) => void) {}

  feed(chunk: string, receivedMs: number): void {
    this.buf += chunk;
    let i: number;
    while ((i = this.buf.indexOf("\n")) >= 0) {
      const line = this.buf.charCodeAt(i - 1) === 13 ? this.buf.slice(0, i - 1) : this.buf.slice(0, i);
      this.buf = this.buf.slice(i + 1);
      if (line === "") {
        if (this.data.length > 0) this.onMessage({ id: this.id, event: this.event, data: this.data.join("\n"), receivedMs });
        this.data = [];
        this.event = null;
        continue;
      }
      const colon = line.indexOf(":");
      if (colon === 0) continue; // comment
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + (line.charCodeAt(colon + 1) === 32 ? 2 : 1));
      if (field === "data") this.data.push(value);
      else if (field === "id") this.id = value;
      else if (field === "event") this.event = value;
    }
  }
}

const KIND = /\\?"kind\\?":\\?"([a-z-]+)/;
const AT_MS = /\\?"atMs\\?":(\d+(?:\.\d+)?)/;
const AT_USEC = /\\?"atUsec\\?":(\d+)/;

export interface EventTime {
  kind: string;
  /** the event's own time (ms since the epoch): a GPU sample's atMs, a transition's atUsec / 1000 */
  atMs: number | null;
}

/** The kind of an event and, for gpu and transition events, its own time. */
export function eventTime(data: string): EventTime | null {
  const k = KIND.exec(data);
  if (!k) return null;
  const kind = k[1]!;
  if (kind === "gpu") {
    const m = AT_MS.exec(data);
    return { kind, atMs: m ? Number(m[1]) : null };
  }
  if (kind === "transition") {
    const m = AT_USEC.exec(data);
    return { kind, atMs: m ? Number(m[1]) / 1000 : null };
  }
  return { kind, atMs: null };
}

export interface SseStream {
  /** resolves with the HTTP status once the response headers arrived */
  status: Promise<number>;
  /** resolves when the stream ends, for whatever reason */
  ended: Promise<string>;
  close(): void;
}

/** GET `url` as an event stream; every message goes to `onMessage`. */
export function openSse(url: string, headers: Record<string, string>, onMessage: (m: SseMessage) => void, agent?: http.Agent): SseStream {
  let resolveStatus!: (s: number) => void;
  let resolveEnded!: (why: string) => void;
  const status = new Promise<number>((r) => (resolveStatus = r));
  const ended = new Promise<string>((r) => (resolveEnded = r));
  const parser = new SseParser(onMessage);
  const req = http.get(url, { headers: { accept: "text/event-stream", ...headers }, agent }, (res) => {
    resolveStatus(res.statusCode ?? 0);
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => parser.feed(chunk, nowMs()));
    res.on("end", () => resolveEnded("ended"));
    res.on("error", (e) => resolveEnded(`error: ${e.message}`));
  });
  req.on("error", (e) => {
    resolveStatus(0);
    resolveEnded(`error: ${e.message}`);
  });
  return { status, ended, close: () => req.destroy() };
}

/** A Fetch API Response body (Panel.handle in-process) read as an event stream. */
export function readSseResponse(res: Response, onMessage: (m: SseMessage) => void): { ended: Promise<void>; close(): void } {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser(onMessage);
  const ended = (async () => {
    for (;;) {
      const next = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (next.done) return;
      parser.feed(decoder.decode(next.value, { stream: true }), nowMs());
    }
  })();
  return { ended, close: () => void reader.cancel().catch(() => undefined) };
}
