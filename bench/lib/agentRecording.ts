/**
 * A recording of a real agent's event stream, for the replay agents (./replayAgents.ts): a
 * simulated agent (the `fleet` profile, 8 GPUs) is started in this process, its `events.watch`
 * is read raw (the SSE bytes as the panel gets them) for `seconds` while one unit is restarted
 * through the agent API each second, and every `data:` frame is kept with its time offset.
 * The GPU samples carry 20 holders; each is padded to 32 (a unit holding a second GPU, as a
 * tensor-parallel engine does) so the replay sends the size the issue measures (8 GPUs, 32 holders).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startAgent } from "../../server/agent/main";
import { createAgentClient } from "../../server/panel/agentClient";
import { readSseResponse } from "./sse";

export interface RecordedFrame {
  /** ms after the recording started */
  dtMs: number;
  /** the frame's data (the agent's JSON, as sent) */
  data: string;
}

export interface AgentRecording {
  /** the recording's own clock: when it started (ms since the epoch) */
  startMs: number;
  lengthMs: number;
  snapshot: string;
  frames: RecordedFrame[];
}

const HOLDERS = 32;
const TOKEN = "bench-recording-token-0123456789abcdefghij";

interface Holder {
  pid: number;
  [k: string]: unknown;
}

/** A GPU sample's frame with its holders padded to 32 (copies get pids no process has). */
export function padHolders(data: string, total = HOLDERS): string {
  const e = JSON.parse(data) as { kind: string; sample?: { gpus: { holders: Holder[] }[] } };
  if (e.kind !== "gpu" || !e.sample) return data;
  const gpus = e.sample.gpus;
  const all = gpus.flatMap((g) => g.holders);
  if (all.length === 0 || gpus.length === 0) return data;
  for (let i = 0; all.length + i < total; i++) {
    const from = all[i % all.length]!;
    gpus[(i * 3 + 1) % gpus.length]!.holders.push({ ...from, pid: 900_000 + i });
  }
  return JSON.stringify(e);
}

export async function recordAgentStream(seconds: number): Promise<AgentRecording> {
  process.env.GPUDECK_SIM_SPEED ??= "20";
  const dataDir = mkdtempSync(path.join(tmpdir(), "gpudeck-bench-record-"));
  const agent = await startAgent({
    host: "127.0.0.1",
    port: 0,
    token: TOKEN,
    unitGlobs: ["vllm-*.service"],
    nvidiaSmiPath: "nvidia-smi",
    dataDir,
    simulate: true,
    gpuIntervalMs: 1000,
    simProfile: "fleet",
    simHostname: "recorded",
  });
  const client = createAgentClient({ url: agent.url, token: TOKEN });
  const frames: RecordedFrame[] = [];
  let snapshot: string | null = null;
  let startMs = 0;
  const res = await fetch(`${agent.url}/trpc/events.watch?input=${encodeURIComponent("{}")}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  if (res.status !== 200) throw new Error(`recording: the agent answered ${res.status}`);
  const stream = readSseResponse(res, (m) => {
    if (m.event !== null) return; // connected, ping
    if (snapshot === null) {
      snapshot = m.data;
      startMs = Date.now();
      return;
    }
    frames.push({ dtMs: Date.now() - startMs, data: padHolders(m.data) });
  });
  try {
    const { units } = await client.units.list.query();
    const names = units.filter((u) => u.activeState === "active").map((u) => u.name);
    for (let i = 0; i < seconds; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      void client.units.restart.mutate({ name: names[i % names.length]!, reason: "bench: recording" }).catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, 500));
  } finally {
    stream.close();
    await agent.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (snapshot === null || frames.length === 0) throw new Error("recording: the agent sent no events");
  return { startMs, lengthMs: seconds * 1000, snapshot, frames: frames.filter((f) => f.dtMs < seconds * 1000) };
}

/**
 * The load the issue measures: each second its GPU sample and one unit transition (with the
 * `unit` event that follows it, as the agent sends them); the restart's other events (jobs,
 * readiness stages, actions) are left out.
 */
export function oneTransitionPerSecond(rec: AgentRecording): AgentRecording {
  const kept: RecordedFrame[] = [];
  const kindOf = (f: RecordedFrame) => /^\{"kind":"([a-z-]+)"/.exec(f.data)?.[1];
  let second = -1;
  let wantUnit = false;
  for (const f of rec.frames) {
    const kind = kindOf(f);
    if (kind === "gpu") kept.push(f);
    else if (kind === "transition" && Math.floor(f.dtMs / 1000) !== second) {
      second = Math.floor(f.dtMs / 1000);
      kept.push(f);
      wantUnit = true;
    } else if (kind === "unit" && wantUnit) {
      kept.push(f);
      wantUnit = false;
    }
  }
  return { ...rec, frames: kept };
}

/** Times in the frame moved by `shiftMs`: every epoch-ms (13 digits) and epoch-µs (16 digits) value near the recording. */
export function restamp(data: string, recordedAtMs: number, shiftMs: number): string {
  const lo = recordedAtMs - 86_400_000 * 365;
  return data.replace(/":(\d{13}|\d{16})(?=[,}\]])/g, (all, n: string) => {
    const v = Number(n);
    if (n.length === 13) return v > lo ? `":${v + shiftMs}` : all;
    return v / 1000 > lo ? `":${v + shiftMs * 1000}` : all;
  });
}
