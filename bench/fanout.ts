/**
 * Fan-out: many browser streams on one panel. For 1 and for 50 simulated hosts (the demo,
 * GPUDECK_DEMO_HOSTS), each host with a GPU sample each second (8 or 12 GPUs) and a unit
 * restarted each second through the agent API (bench/lib/agents.ts), N viewers (a separate load
 * process, bench/lib/viewers.ts) watch host pages (`events.watch {watch:"host"}`), spread over
 * the hosts. Measured for each N: delivery latency (receive time − the event's own time: a GPU
 * sample's atMs, a transition's atUsec), the CPU and RSS of every panel process, the agent
 * connections each agent holds (its /metrics), and the agents' own CPU.
 *
 * gpudeck: `npm run demo` (scripts/run.ts demo: the built app, server/panel/serve.ts in demo
 * mode, the fleet hub). Baseline in the same run: today's alternative design, the per-viewer
 * proxy (bench/lib/perViewerProxy.ts: one agent subscription per viewer, re-streamed) over the
 * same simulated agents (scripts/demoAgents.ts).
 *
 *   node --import tsx bench/fanout.ts [--smoke] [--viewers=10,100,500,1000] [--hosts=1,50] [--seconds=20]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { runMain, smoke } from "./lib/args";
import { readAgents, streamsRange, TransitionDriver, type AgentEntry } from "./lib/agents";
import { printHeader } from "./lib/machine";
import { CpuWindow, PeakSampler, treeRssBytes } from "./lib/proc";
import { freePort, Proc, startDemo, startDemoAgents } from "./lib/processes";
import { mib, ms, sleep } from "./lib/stats";
import { printTable, Targets, type Cell } from "./lib/table";
import { ViewerLoad } from "./lib/viewerLoad";
import type { ViewerStats, ViewerTarget } from "./lib/viewers";

const listArg = (name: string, full: number[], small: number[]) => {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg
    ? arg
        .slice(name.length + 3)
        .split(",")
        .map(Number)
    : smoke
      ? small
      : full;
};
const VIEWERS = listArg("viewers", [10, 100, 500, 1000], [5, 10]);
const HOSTS = listArg("hosts", [1, 50], [2]);
const MEASURE_S = listArg("seconds", [20], [2])[0]!;
const WARM_S = smoke ? 1 : 5;
/** how long the viewers may take to connect before the window starts with those that did */
const CONNECT_TIMEOUT_S = smoke ? 30 : 120;
const TARGET_VIEWERS = 1000;

interface Result {
  system: "gpudeck" | "per-viewer proxy";
  hosts: number;
  viewers: number;
  /** seconds until every viewer's stream answered (or the timeout) */
  connectS: number;
  stats: ViewerStats;
  serverCpuPct: number;
  serverRss: number;
  agentsCpuPct: number;
  streams: { min: number; max: number };
}

interface System {
  name: Result["system"];
  serverPids: () => number[];
  agentsPid: () => number[];
  agents: AgentEntry[];
  targets: ViewerTarget[];
}

async function measure(system: System, hosts: number): Promise<Result[]> {
  const driver = new TransitionDriver(system.agents);
  await driver.start();
  const load = ViewerLoad.start();
  const out: Result[] = [];
  try {
    for (const n of VIEWERS) {
      const t0 = performance.now();
      const opened = await load.set(system.targets, n, CONNECT_TIMEOUT_S * 1000);
      const connectS = (performance.now() - t0) / 1000;
      if (opened.connected < n) console.log(`  ${system.name}, ${n} viewers: only ${opened.connected} connected within ${CONNECT_TIMEOUT_S} s`);
      await sleep(WARM_S * 1000);
      const server = new CpuWindow(system.serverPids);
      const agents = new CpuWindow(system.agentsPid);
      const rss = new PeakSampler(() => treeRssBytes(...system.serverPids()));
      await load.reset();
      server.start();
      agents.start();
      rss.start();
      await sleep(MEASURE_S * 1000);
      const stats = await load.stats();
      const r: Result = {
        system: system.name,
        hosts,
        viewers: n,
        connectS,
        stats,
        serverCpuPct: server.stop().corePct,
        serverRss: rss.stop(),
        agentsCpuPct: agents.stop().corePct,
        streams: await streamsRange(system.agents),
      };
      console.log(
        `  ${r.system}, ${hosts} host(s), ${n} viewers (${stats.connected} connected): p95 ${ms(stats.all.p95)}, server ${r.serverCpuPct.toFixed(0)} % CPU, ${mib(r.serverRss)}, agent streams ${r.streams.min}–${r.streams.max}`,
      );
      out.push(r);
    }
  } finally {
    driver.stop();
    await load.close();
  }
  return out;
}

function hostTargets(agents: AgentEntry[], url: (host: string) => string): ViewerTarget[] {
  return agents.map((a) => ({ url: url(a.name), headers: {} }));
}

async function gpudeck(hosts: number): Promise<Result[]> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "gpudeck-bench-fanout-"));
  let demo: Proc | null = null;
  try {
    const started = await startDemo(dataDir, hosts, await freePort());
    demo = started.proc;
    const agents = readAgents(started.agentsFile);
    // the panel holds one stream per agent once it has connected to every host
    for (let i = 0; i < 100 && (await streamsRange(agents)).min < 1; i++) await sleep(200);
    const panel = demo.find(/server\/panel\/serve\.ts/);
    const agentsProc = demo.find(/scripts\/demoAgents\.ts/);
    if (panel.length === 0 || agentsProc.length === 0) throw new Error("could not find the panel's or the agents' process under npm run demo");
    const watch = (host: string) => `${started.url}/api/trpc/events.watch?input=${encodeURIComponent(JSON.stringify({ watch: "host", host }))}`;
    return await measure({ name: "gpudeck", serverPids: () => panel, agentsPid: () => agentsProc, agents, targets: hostTargets(agents, watch) }, hosts);
  } finally {
    await demo?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function baseline(hosts: number): Promise<Result[]> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "gpudeck-bench-proxy-"));
  const agentsFile = path.join(dataDir, "agents.json");
  let agentsProc: Proc | null = null;
  let proxy: Proc | null = null;
  try {
    agentsProc = await startDemoAgents(dataDir, hosts, agentsFile);
    const port = await freePort();
    proxy = (await Proc.node("per-viewer proxy", ["bench/lib/perViewerProxy.ts", agentsFile, String(port)], { ...process.env }, /^\[proxy\] ready/, 60_000))
      .proc;
    const agents = readAgents(agentsFile);
    const watch = (host: string) => `http://127.0.0.1:${port}/trpc/watch?input=${encodeURIComponent(JSON.stringify({ host }))}`;
    const proxyPid = proxy.pid;
    const agentsPid = agentsProc.pid;
    return await measure(
      { name: "per-viewer proxy", serverPids: () => [proxyPid], agentsPid: () => [agentsPid], agents, targets: hostTargets(agents, watch) },
      hosts,
    );
  } finally {
    await proxy?.stop();
    await agentsProc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function rows(results: Result[]): Cell[][] {
  return results.map((r) => [
    r.system,
    r.hosts,
    r.viewers,
    `${r.stats.connected} in ${r.connectS.toFixed(1)} s`,
    ms(r.stats.gpu.p95),
    ms(r.stats.transition.p95),
    ms(r.stats.all.p50),
    ms(r.stats.all.p95),
    ms(r.stats.all.max),
    (r.stats.messages / Math.max(1, r.stats.connected) / Math.max(0.001, r.stats.wallS)).toFixed(1),
    `${r.serverCpuPct.toFixed(0)} %`,
    mib(r.serverRss),
    r.streams.min < 0 ? "no answer" : r.streams.min === r.streams.max ? String(r.streams.min) : `${r.streams.min}–${r.streams.max}`,
    `${r.agentsCpuPct.toFixed(0)} %`,
    `${((100 * r.stats.cpuS) / Math.max(0.001, r.stats.wallS)).toFixed(0)} %`,
    `${r.stats.resets}/${r.stats.ends}/${r.stats.refused}`,
  ]);
}

async function main() {
  printHeader("Fan-out: browser streams on one panel (gpudeck's fleet hub vs a per-viewer proxy)", smoke);
  console.log(
    `viewers ${VIEWERS.join(", ")}; hosts ${HOSTS.join(", ")}; each level: ${WARM_S} s settle, then ${MEASURE_S} s measured; a GPU sample and a unit restart per host each second\n`,
  );
  const results: Result[] = [];
  for (const hosts of HOSTS) {
    results.push(...(await gpudeck(hosts)));
    results.push(...(await baseline(hosts)));
  }
  console.log("");
  printTable(
    [
      "system",
      "hosts",
      "viewers",
      "connected",
      "gpu p95",
      "transition p95",
      "p50",
      "p95",
      "max",
      "events/s per viewer",
      "server CPU",
      "server RSS",
      "agent streams",
      "agents CPU",
      "load gen CPU",
      "resets/ends/refused",
    ],
    rows(results),
  );
  console.log(
    "latency: receive time in the load process − the event's own time (GPU sample atMs, transition atUsec), every delivery to every viewer; " +
      "server = every panel process (gpudeck: server/panel/serve.ts; baseline: the proxy); CPU in % of one core; RSS peak during the window; " +
      "agent streams = gpudeck_agent_event_streams of each agent (min–max); resets = a viewer cut and sent a fresh snapshot, ends = streams that ended and were reopened\n",
  );

  const targets = new Targets();
  const lo = Math.min(...VIEWERS);
  const hi = Math.max(...VIEWERS);
  for (const hosts of HOSTS) {
    for (const system of ["gpudeck", "per-viewer proxy"] as const) {
      const at = (n: number) => results.find((r) => r.system === system && r.hosts === hosts && r.viewers === n);
      const a = at(lo)?.stats.all.p95;
      const b = at(hi)?.stats.all.p95;
      if (a && b) console.log(`${system}, ${hosts} host(s): p95 at ${hi} viewers / p95 at ${lo} = ${(b / a).toFixed(1)}×`);
    }
    const top = results.find((r) => r.system === "gpudeck" && r.hosts === hosts && r.viewers === hi);
    if (!top || (hi !== TARGET_VIEWERS && !smoke)) continue;
    targets.check(`${hosts} host(s): all ${hi} viewers connected`, top.stats.connected === hi, `${top.stats.connected} in ${top.connectS.toFixed(1)} s`);
    targets.check(`${hosts} host(s), ${hi} viewers: delivery p95 ≤ 250 ms`, (top.stats.all.p95 ?? Infinity) <= 250, ms(top.stats.all.p95));
    targets.check(`${hosts} host(s), ${hi} viewers: panel RSS ≤ 500 MB`, top.serverRss <= 500 * 2 ** 20, mib(top.serverRss));
    targets.check(
      `${hosts} host(s), ${hi} viewers: one connection per agent`,
      top.streams.max === 1 && top.streams.min === 1,
      `${top.streams.min}–${top.streams.max}`,
    );
  }
  console.log("");
  targets.print();
}

runMain(main);
