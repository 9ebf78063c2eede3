/**
 * The demo's simulated fleet: N real agents (HTTP, tRPC, their own tokens) on simulated hosts,
 * in one process, and a GPUDECK_AGENTS_FILE for the panel.
 *   gpu-a  the incident host (kill the Kimi unit, restart it, watch the memory drain)
 *   gpu-b  a healthy host
 *   gpu-c  twenty small services; its agent goes away for a minute every few minutes
 *   gpu-04 … gpu-NN  more hosts like gpu-c that stay up (GPUDECK_DEMO_HOSTS=N, e.g. 50 for benchmarks)
 * Usage: node --import tsx scripts/demoAgents.ts AGENTS_FILE   (GPUDECK_DEMO_HOSTS, default 3)
 * Prints "[demo] N agents ready" once every agent listens.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startAgent, type RunningAgent } from "../server/agent/main";
import type { SimProfile } from "../server/agent/simulator/profiles";

const say = (msg: string) => console.log(`[demo] ${msg}`);
const file = process.argv[2];
if (!file) {
  console.error("usage: node --import tsx scripts/demoAgents.ts AGENTS_FILE");
  process.exit(2);
}
const count = Math.max(1, Math.min(200, Number(process.env.GPUDECK_DEMO_HOSTS ?? 3) || 3));
// gpu-c's agent: up this long, then away this long (seconds)
const flakyUpS = Number(process.env.GPUDECK_DEMO_FLAKY_UP_S ?? 240);
const flakyDownS = Number(process.env.GPUDECK_DEMO_FLAKY_DOWN_S ?? 60);

interface DemoHost {
  name: string;
  profile: SimProfile;
  flaky: boolean;
  token: string;
  port: number;
  agent: RunningAgent | null;
}

const hosts: DemoHost[] = Array.from({ length: count }, (_, i) => ({
  name: i === 0 ? "gpu-a" : i === 1 ? "gpu-b" : i === 2 ? "gpu-c" : `gpu-${String(i + 1).padStart(2, "0")}`,
  profile: i === 0 ? "incident" : i === 1 ? "healthy" : "fleet",
  flaky: i === 2,
  token: randomBytes(32).toString("base64url"),
  port: 0,
  agent: null,
}));
const dataDir = mkdtempSync(path.join(tmpdir(), "gpudeck-demo-agents-"));

async function up(h: DemoHost): Promise<void> {
  h.agent = await startAgent({
    host: "127.0.0.1",
    port: h.port,
    token: h.token,
    unitGlobs: (process.env.GPUDECK_UNITS ?? "vllm-*.service").split(","),
    nvidiaSmiPath: "nvidia-smi",
    dataDir,
    simulate: true,
    gpuIntervalMs: Number(process.env.GPUDECK_GPU_INTERVAL_MS ?? 1000),
    simProfile: h.profile,
    simHostname: h.name,
  });
  h.port = Number(new URL(h.agent.url).port);
}

function cycle(h: DemoHost): void {
  if (!(flakyUpS > 0 && flakyDownS > 0)) return;
  const timer = setTimeout(async () => {
    say(`${h.name}: its agent goes away for ${flakyDownS} s (the demo's flaky host)`);
    await h.agent?.close();
    h.agent = null;
    setTimeout(async () => {
      await up(h).catch((err: Error) => say(`${h.name}: could not come back: ${err.message}`));
      say(`${h.name}: its agent is back`);
      cycle(h);
    }, flakyDownS * 1000).unref();
  }, flakyUpS * 1000);
  timer.unref();
}

async function main(): Promise<void> {
  for (const h of hosts) await up(h);
  mkdirSync(path.dirname(file!), { recursive: true, mode: 0o700 });
  const entries = hosts.map((h) => ({ name: h.name, url: `http://127.0.0.1:${h.port}`, token: h.token }));
  writeFileSync(file!, `${JSON.stringify(entries, null, 2)}\n`, { mode: 0o600 });
  for (const h of hosts) if (h.flaky) cycle(h);
  say(`${hosts.length} agents ready (${hosts.map((h) => h.name).join(", ")})`);
  // the parent keeps this process alive; it ends on SIGTERM
  setInterval(() => undefined, 60_000);
}

const stop = async () => {
  await Promise.allSettled(hosts.map((h) => h.agent?.close()));
  process.exit(0);
};
process.once("SIGTERM", () => void stop());
process.once("SIGINT", () => void stop());

main().catch((err: Error) => {
  console.error(`[demo] ${err.stack ?? err.message}`);
  process.exit(1);
});
