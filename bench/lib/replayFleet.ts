/**
 * The benches' fleet of replay agents (./replayAgents.ts, one process) and the panel over them
 * (./panelApi.ts, in demo mode: no login for the viewers), shared by bench/ingest.ts and
 * bench/delivery.ts.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import path from "node:path";
import { readAgents, streamsRange, type AgentEntry } from "./agents";
import { demoEnv, freePort, Proc, ROOT } from "./processes";
import { sleep } from "./stats";

/** Start the replay agents once, for the largest level; each level's panel watches the first N. */
export interface ReplayFleet {
  proc: Proc;
  agents: AgentEntry[];
  /** streams open on all replay agents */
  streams: () => Promise<number>;
  /** streams open on each of the first n agents (min–max) */
  perAgent: (n: number) => Promise<{ min: number; max: number }>;
}

export async function startReplay(dir: string, count: number, load: "transition" | "restarts", recordSeconds: number): Promise<ReplayFleet> {
  const file = path.join(dir, "replay-agents.json");
  const { proc, match } = await Proc.node(
    "replay agents",
    ["bench/lib/replayAgents.ts", String(count), file, String(recordSeconds)],
    { ...process.env, REPLAY_LOAD: load },
    /^\[replay\] \d+ agents ready on (\d+)/,
    120_000,
  );
  const port = match[1]!;
  const streams = async () => Number(await (await fetch(`http://127.0.0.1:${port}/streams`)).text());
  const agents = readAgents(file);
  const perAgent = (n: number) => streamsRange(agents.slice(0, n));
  return { proc, agents, streams, perAgent };
}

export async function waitFor(what: string, ok: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  while (!(await ok())) {
    if (performance.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
  return (performance.now() - t0) / 1000;
}

/** The panel (API and fleet hub, no pages) in demo mode over `agents`. */
export async function startPanelApi(
  dir: string,
  agents: AgentEntry[],
  extraArgs: string[] = [],
  env: Record<string, string> = {},
  root = ROOT,
): Promise<{ proc: Proc; url: string }> {
  const file = path.join(dir, `agents-${agents.length}.json`);
  writeFileSync(file, JSON.stringify(agents));
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(dir, "panel-"));
  const { proc } = await Proc.node(
    "panel",
    [...extraArgs, "bench/lib/panelApi.ts"],
    { ...demoEnv(dataDir, agents.length), GPUDECK_DEMO: "1", GPUDECK_AGENTS_FILE: file, PORT: String(port), ...env },
    /^\[panel\] ready on/,
    120_000,
    root,
  );
  return { proc, url: `http://127.0.0.1:${port}` };
}
