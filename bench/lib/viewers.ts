/**
 * The load: N browser streams (SSE over node:http) in a process of their own, so the server
 * under test does not share a process with its clients. Driven over IPC by bench/lib/viewerLoad.ts:
 *   { type: "set", targets, count, timeoutMs }  open or close streams until `count` are open,
 *                                    spread over `targets` round-robin (ramped: 50 every 100 ms);
 *                                    answers when all got their response headers, or at timeoutMs
 *   { type: "reset" }                forget what was measured so far (start of a window)
 *   { type: "stats" }                latencies (receive time − the event's own time) per kind,
 *                                    messages, snapshots after the first (fell behind), ends, CPU
 *   { type: "close" }                close everything and exit
 * A stream that ends is reopened after 1 s with Last-Event-ID, as a browser's EventSource would.
 */
import http from "node:http";
import { eventTime, openSse, type SseStream } from "./sse";
import { summarize, type Summary } from "./stats";

export interface ViewerTarget {
  url: string;
  headers: Record<string, string>;
}

export type ViewerCommand =
  { type: "set"; targets: ViewerTarget[]; count: number; timeoutMs: number } | { type: "reset" } | { type: "stats" } | { type: "close" };

export interface ViewerStats {
  /** streams wanted */
  open: number;
  /** streams whose response headers arrived (200) and that have not ended */
  connected: number;
  gpu: Summary;
  transition: Summary;
  all: Summary;
  messages: number;
  /** snapshots after a stream's first message: the server cut the viewer's backlog */
  resets: number;
  /** streams that ended and were reopened */
  ends: number;
  /** HTTP answers other than 200 when opening */
  refused: number;
  cpuS: number;
  wallS: number;
}

interface Viewer {
  target: ViewerTarget;
  stream: SseStream | null;
  connected: boolean;
  lastId: string | null;
  seen: number;
  wanted: boolean;
}

const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
const viewers: Viewer[] = [];
let gpu: number[] = [];
let transition: number[] = [];
let messages = 0;
let resets = 0;
let ends = 0;
let refused = 0;
let cpuStart = process.cpuUsage();
let wallStart = performance.now();

function connect(v: Viewer): Promise<void> {
  const headers = v.lastId ? { ...v.target.headers, "last-event-id": v.lastId } : v.target.headers;
  const stream = openSse(
    v.target.url,
    headers,
    (m) => {
      if (m.id) v.lastId = m.id;
      const t = eventTime(m.data);
      if (!t) return;
      messages++;
      if ((t.kind === "snapshot" || t.kind === "host-snapshot" || t.kind === "fleet-snapshot") && v.seen > 0) resets++;
      v.seen++;
      if (t.atMs === null) return;
      const latency = m.receivedMs - t.atMs;
      if (t.kind === "gpu") gpu.push(latency);
      else if (t.kind === "transition") transition.push(latency);
    },
    agent,
  );
  v.stream = stream;
  void stream.ended.then(() => {
    v.connected = false;
    if (!v.wanted) return;
    ends++;
    setTimeout(() => v.wanted && void connect(v), 1000);
  });
  return stream.status.then((s) => {
    if (s !== 200) refused++;
    else v.connected = true;
  });
}

/** Open or close streams until `count` are wanted; resolves when all answered or after `timeoutMs`. */
async function setCount(targets: ViewerTarget[], count: number, timeoutMs: number): Promise<void> {
  while (viewers.length > count) {
    const v = viewers.pop()!;
    v.wanted = false;
    v.stream?.close();
  }
  const pending: Promise<void>[] = [];
  for (let i = viewers.length; i < count; i++) {
    const v: Viewer = { target: targets[i % targets.length]!, stream: null, connected: false, lastId: null, seen: 0, wanted: true };
    viewers.push(v);
    pending.push(connect(v));
    if (pending.length % 50 === 0) await new Promise((r) => setTimeout(r, 100));
  }
  await Promise.race([Promise.all(pending), new Promise((r) => setTimeout(r, timeoutMs))]);
}

const connectedCount = () => viewers.filter((v) => v.connected).length;

function stats(): ViewerStats {
  const cpu = process.cpuUsage(cpuStart);
  return {
    open: viewers.length,
    connected: connectedCount(),
    gpu: summarize(gpu),
    transition: summarize(transition),
    all: summarize([...gpu, ...transition]),
    messages,
    resets,
    ends,
    refused,
    cpuS: (cpu.user + cpu.system) / 1e6,
    wallS: (performance.now() - wallStart) / 1000,
  };
}

process.on("message", (cmd: ViewerCommand) => {
  const reply = (m: unknown) => process.send!(m);
  switch (cmd.type) {
    case "set":
      void setCount(cmd.targets, cmd.count, cmd.timeoutMs).then(() => reply({ type: "set", open: viewers.length, connected: connectedCount(), refused }));
      return;
    case "reset":
      gpu = [];
      transition = [];
      messages = resets = ends = refused = 0;
      cpuStart = process.cpuUsage();
      wallStart = performance.now();
      reply({ type: "reset" });
      return;
    case "stats":
      reply({ type: "stats", stats: stats() });
      return;
    case "close":
      for (const v of viewers) {
        v.wanted = false;
        v.stream?.close();
      }
      process.exit(0);
  }
});
process.on("disconnect", () => process.exit(0));
