/**
 * Replay agents: hundreds of agents in one cheap process, for measuring what the panel pays per
 * host. A real agent's stream is recorded once at start (./agentRecording.ts: a simulated agent,
 * a GPU sample a second with 8 GPUs and 32 holders, a unit restarted each second) and each
 * replay agent plays it in a loop, times re-stamped to now, with ids of its own boot, speaking
 * the agent's wire protocol: `GET <url>/trpc/events.watch` over SSE in tRPC's format, the bearer
 * token checked (401 otherwise), a fresh snapshot on every (re)connect, as an agent after a
 * restart. The panel cannot tell it from an agent for its one stream per host. Each agent starts
 * at its own place in the loop, so the fleet's events spread over the second.
 *
 *   node --import tsx bench/lib/replayAgents.ts COUNT AGENTS_FILE [RECORD_SECONDS]
 * Each agent sends a GPU sample and one transition (with its unit event) a second; with
 * REPLAY_LOAD=restarts every event of a restart a second (jobs, readiness stages, actions too).
 * Writes AGENTS_FILE ([{ name, url, token }], what GPUDECK_AGENTS_FILE takes), prints
 * "[replay] N agents ready on PORT". `GET /streams` (no token): open streams in all.
 * `<url>/metrics` (token): gpudeck_agent_event_streams, as an agent's.
 */
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import http from "node:http";
import { oneTransitionPerSecond, recordAgentStream, restamp, type AgentRecording } from "./agentRecording";

interface ReplayHost {
  name: string;
  token: string;
  bootId: string;
  seq: number;
  phaseMs: number;
  streams: Set<ReplayStream>;
}

interface ReplayStream {
  res: http.ServerResponse;
  /** index of the next frame of the loop to send, and the loop round it belongs to */
  next: number;
  round: number;
}

export class ReplayAgents {
  private readonly hosts: ReplayHost[];
  private readonly server: http.Server;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly t0 = Date.now();
  port = 0;

  constructor(
    private readonly rec: AgentRecording,
    count: number,
  ) {
    this.hosts = Array.from({ length: count }, (_, i) => ({
      name: `rp-${String(i + 1).padStart(3, "0")}`,
      token: randomBytes(24).toString("base64url"),
      bootId: randomBytes(6).toString("hex"),
      seq: 0,
      phaseMs: Math.floor((i * rec.lengthMs) / Math.max(1, count)) % rec.lengthMs,
      streams: new Set(),
    }));
    this.server = http.createServer((req, res) => this.request(req, res));
  }

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", () => r()));
    const a = this.server.address();
    this.port = typeof a === "object" && a ? a.port : 0;
    this.timer = setInterval(() => this.tick(), 25);
  }

  entries(): { name: string; url: string; token: string }[] {
    return this.hosts.map((h, i) => ({ name: h.name, url: `http://127.0.0.1:${this.port}/h/${i}`, token: h.token }));
  }

  streams(): number {
    let n = 0;
    for (const h of this.hosts) n += h.streams.size;
    return n;
  }

  private request(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? "/", "http://replay");
    if (url.pathname === "/streams") return void res.end(`${this.streams()}\n`);
    const m = /^\/h\/(\d+)(\/.*)$/.exec(url.pathname);
    const host = m ? this.hosts[Number(m[1])] : undefined;
    if (!host) return void res.writeHead(404).end();
    if (req.headers.authorization !== `Bearer ${host.token}`) {
      res.writeHead(401, { "content-type": "application/json" });
      return void res.end(JSON.stringify({ error: { message: "bad token", code: -32001, data: { code: "UNAUTHORIZED", httpStatus: 401 } } }));
    }
    if (m![2] === "/metrics") return void res.end(`gpudeck_agent_event_streams ${host.streams.size}\n`);
    if (m![2] !== "/trpc/events.watch" || req.method !== "GET") {
      res.writeHead(404, { "content-type": "application/json" });
      return void res.end(
        JSON.stringify({
          error: { message: `the replay agent answers only events.watch (${m![2]})`, code: -32004, data: { code: "NOT_FOUND", httpStatus: 404 } },
        }),
      );
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform", connection: "keep-alive" });
    res.write(`event: connected\ndata: {"reconnectAfterInactivityMs":25000}\n\n\n`);
    const now = Date.now();
    const snap = restamp(this.rec.snapshot, this.rec.startMs, now - this.rec.startMs)
      .replace(/"bootId":"[0-9a-f]+"/, `"bootId":"${host.bootId}"`)
      .replace(/"host":"recorded"/, `"host":"${host.name}"`);
    res.write(`data: ${snap}\nid: ${host.bootId}-${++host.seq}\n\n\n`);
    const pos = this.position(host, now);
    const stream: ReplayStream = { res, next: this.rec.frames.findIndex((f) => f.dtMs > pos.inLoop), round: pos.round };
    if (stream.next < 0) {
      stream.next = 0;
      stream.round++;
    }
    host.streams.add(stream);
    res.on("close", () => host.streams.delete(stream));
  }

  private position(h: ReplayHost, now: number): { round: number; inLoop: number } {
    const t = now - this.t0 + h.phaseMs;
    return { round: Math.floor(t / this.rec.lengthMs), inLoop: t % this.rec.lengthMs };
  }

  private tick(): void {
    const now = Date.now();
    const frames = this.rec.frames;
    for (const h of this.hosts) {
      if (h.streams.size === 0) continue;
      const pos = this.position(h, now);
      for (const s of h.streams) {
        let out = "";
        while (s.round < pos.round || (s.round === pos.round && frames[s.next]!.dtMs <= pos.inLoop)) {
          const f = frames[s.next]!;
          const recordedAt = this.rec.startMs + f.dtMs;
          // sent now: its times as if it happened now
          out += `data: ${restamp(f.data, this.rec.startMs, now - recordedAt)}\nid: ${h.bootId}-${++h.seq}\n\n\n`;
          if (++s.next >= frames.length) {
            s.next = 0;
            s.round++;
          }
        }
        if (out) s.res.write(out);
      }
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    for (const h of this.hosts) for (const s of h.streams) s.res.destroy();
    await new Promise((r) => this.server.close(r));
  }
}

async function main(): Promise<void> {
  const count = Number(process.argv[2]);
  const file = process.argv[3];
  const seconds = Number(process.argv[4] ?? 20);
  if (!(count > 0) || !file) {
    console.error("usage: node --import tsx bench/lib/replayAgents.ts COUNT AGENTS_FILE [RECORD_SECONDS]");
    process.exit(2);
  }
  const full = await recordAgentStream(seconds);
  const rec = process.env.REPLAY_LOAD === "restarts" ? full : oneTransitionPerSecond(full);
  const replay = new ReplayAgents(rec, count);
  await replay.listen();
  writeFileSync(file, JSON.stringify(replay.entries()));
  const kinds = new Map<string, number>();
  for (const f of rec.frames) {
    const k = /"kind":"([a-z-]+)"/.exec(f.data)?.[1] ?? "?";
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
  console.log(`[replay] recorded ${rec.frames.length} events in ${seconds} s (${[...kinds].map(([k, n]) => `${k} ${n}`).join(", ")})`);
  console.log(`[replay] ${count} agents ready on ${replay.port}`);
  process.once("SIGTERM", () => void replay.close().finally(() => process.exit(0)));
}

if (process.argv[1]?.endsWith("replayAgents.ts")) {
  main().catch((err: Error) => {
    console.error(`[replay] ${err.stack ?? err.message}`);
    process.exit(1);
  });
}
