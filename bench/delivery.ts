/**
 * Delivery: many browser streams on one panel, agents replayed (bench/lib/replayAgents.ts: a
 * real agent's recorded stream, re-stamped; by default every event of a unit restart each
 * second plus a GPU sample, 8 GPUs and 32 holders). Two fleets: 1 host with every viewer on its
 * page, and 50 hosts with the viewers spread over the 50 host pages and the overview (one in
 * ten on the overview). The viewers are a load process of their own (bench/lib/viewers.ts, raw
 * SSE over node:http). Measured at each level: time until every viewer's stream answered,
 * delivery latency (receive time − the event's own time, which the replay agent stamps when it
 * sends: so agent → panel → viewer), the panel's CPU and peak RSS, the streams each agent holds.
 * Baseline in the same run (--baseline=DIR): the same bench against the panel of another
 * checkout (e.g. a `git archive` of main), same replay agents, same viewers.
 *
 *   node --import tsx bench/delivery.ts [--smoke] [--viewers=10,1000] [--hosts=1,50] [--seconds=20] [--baseline=DIR] [--load=transition] [--cpu-prof]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { runMain, smoke } from "./lib/args";
import { printHeader } from "./lib/machine";
import { CpuWindow, PeakSampler, rssBytes } from "./lib/proc";
import { ROOT } from "./lib/processes";
import { startPanelApi, startReplay, waitFor, type ReplayFleet } from "./lib/replayFleet";
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
const VIEWERS = listArg("viewers", [10, 1000], [5, 10]);
const HOSTS = listArg("hosts", [1, 50], [2]);
const MEASURE_S = listArg("seconds", [20], [1])[0]!;
const WARM_S = smoke ? 1 : 5;
const CONNECT_TIMEOUT_S = smoke ? 30 : 60;
const BASELINE = process.argv.find((a) => a.startsWith("--baseline="))?.slice(11) ?? null;
const LOAD = process.argv.includes("--load=transition") ? "transition" : "restarts";
/** --cpu-prof: the panel's V8 CPU profiles (one per thread) of each fleet to .bench-prof/delivery-HOSTS-TIME/ */
const PROFILE = process.argv.includes("--cpu-prof");

interface Result {
  system: string;
  hosts: number;
  viewers: number;
  connectS: number;
  stats: ViewerStats;
  cpuPct: number;
  rss: number;
  streams: { min: number; max: number };
}

function targetsFor(url: string, agents: { name: string }[], viewers: number): ViewerTarget[] {
  const host = (h: string) => ({ url: `${url}/api/trpc/events.watch?input=${encodeURIComponent(JSON.stringify({ watch: "host", host: h }))}`, headers: {} });
  if (agents.length === 1) return [host(agents[0]!.name)];
  // one in ten on the overview, the rest over the host pages (round-robin over this list)
  const fleet = { url: `${url}/api/trpc/events.watch?input=${encodeURIComponent(JSON.stringify({ watch: "fleet" }))}`, headers: {} };
  const list: ViewerTarget[] = [];
  for (let i = 0; list.length < Math.max(viewers, 10); i++) list.push(i % 10 === 9 ? fleet : host(agents[i % agents.length]!.name));
  return list;
}

async function run(system: string, root: string, dir: string, replay: ReplayFleet, hosts: number): Promise<Result[]> {
  const agents = replay.agents.slice(0, hosts);
  const before = await replay.streams();
  const prof = path.join(ROOT, ".bench-prof");
  // a folder per fleet and node's own file names (pid, thread): one fixed name let a worker thread's profile overwrite the main thread's
  const extra = PROFILE && system === "gpudeck" ? ["--cpu-prof", `--cpu-prof-dir=${path.join(prof, `delivery-${hosts}-${Date.now()}`)}`] : [];
  const panel = await startPanelApi(dir, agents, extra, {}, root);
  const load = ViewerLoad.start();
  const out: Result[] = [];
  try {
    await waitFor(`${hosts} agent streams`, async () => (await replay.streams()) >= before + hosts, 60_000);
    for (const n of VIEWERS) {
      const t0 = performance.now();
      const opened = await load.set(targetsFor(panel.url, agents, n), n, CONNECT_TIMEOUT_S * 1000);
      const connectS = (performance.now() - t0) / 1000;
      if (opened.connected < n) console.log(`  ${system}, ${n} viewers: only ${opened.connected} connected within ${CONNECT_TIMEOUT_S} s`);
      await sleep(WARM_S * 1000);
      const pid = panel.proc.pid;
      const cpu = new CpuWindow(() => [pid]);
      const rss = new PeakSampler(() => rssBytes(pid));
      await load.reset();
      cpu.start();
      rss.start();
      await sleep(MEASURE_S * 1000);
      const stats = await load.stats();
      const r: Result = { system, hosts, viewers: n, connectS, stats, cpuPct: cpu.stop().corePct, rss: rss.stop(), streams: await replay.perAgent(hosts) };
      console.log(
        `  ${system}, ${hosts} host(s), ${n} viewers (${stats.connected} connected in ${connectS.toFixed(1)} s): p95 ${ms(stats.all.p95)}, panel ${r.cpuPct.toFixed(0)} %, ${mib(r.rss)}, agent streams ${r.streams.min}–${r.streams.max}`,
      );
      out.push(r);
    }
  } finally {
    await load.close();
    await panel.proc.stop();
  }
  return out;
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
    `${r.cpuPct.toFixed(0)} %`,
    mib(r.rss),
    r.streams.min === r.streams.max ? String(r.streams.min) : `${r.streams.min}–${r.streams.max}`,
    `${((100 * r.stats.cpuS) / Math.max(0.001, r.stats.wallS)).toFixed(0)} %`,
    `${r.stats.resets}/${r.stats.ends}/${r.stats.refused}`,
  ]);
}

async function main() {
  printHeader("Delivery: browser streams on one panel over replayed agents", smoke);
  console.log(
    `viewers ${VIEWERS.join(", ")}; hosts ${HOSTS.join(", ")} (50 hosts: one viewer in ten on the overview, the rest over the host pages); replay agents: a GPU sample and ${LOAD === "restarts" ? "every event of a unit restart" : "one transition"} per host per second; each level: ${WARM_S} s settle, then ${MEASURE_S} s measured\n`,
  );
  const dir = mkdtempSync(path.join(tmpdir(), "gpudeck-bench-delivery-"));
  const replay = await startReplay(dir, Math.max(...HOSTS), LOAD, smoke ? 3 : 20);
  const results: Result[] = [];
  try {
    for (const hosts of HOSTS) {
      results.push(...(await run("gpudeck", ROOT, dir, replay, hosts)));
      if (BASELINE) results.push(...(await run("baseline", path.resolve(BASELINE), dir, replay, hosts)));
    }
  } finally {
    await replay.proc.stop();
    rmSync(dir, { recursive: true, force: true });
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
      "panel CPU",
      "panel RSS",
      "agent streams",
      "load gen CPU",
      "resets/ends/refused",
    ],
    rows(results),
  );
  console.log(
    `latency: receive time in the load process − the time the replay agent stamped on the event as it sent it (GPU sample atMs, transition atUsec), every delivery to every viewer (overview viewers get summaries, not timed); baseline = the panel of ${BASELINE ?? "(none given)"}; CPU in % of one core; RSS peak during the window; agent streams = open streams per replay agent (min–max); resets = a viewer cut and sent a fresh snapshot\n`,
  );
  const targets = new Targets();
  const hi = Math.max(...VIEWERS);
  const top = (hosts: number) => results.find((r) => r.system === "gpudeck" && r.hosts === hosts && r.viewers === hi);
  const one = top(1);
  if (one && (hi === 1000 || smoke)) targets.check(`1 host, ${hi} viewers: p95 ≤ 100 ms`, (one.stats.all.p95 ?? Infinity) <= 100, ms(one.stats.all.p95));
  const fifty = top(50);
  if (fifty && hi === 1000) {
    targets.check(
      `50 hosts, ${hi} viewers: all connected within 10 s`,
      fifty.stats.connected === hi && fifty.connectS <= 10,
      `${fifty.stats.connected} in ${fifty.connectS.toFixed(1)} s`,
    );
    targets.check(`50 hosts, ${hi} viewers: p95 ≤ 250 ms`, (fifty.stats.all.p95 ?? Infinity) <= 250, ms(fifty.stats.all.p95));
    targets.check(`50 hosts, ${hi} viewers: panel RSS ≤ 500 MB`, fifty.rss <= 500 * 2 ** 20, mib(fifty.rss));
    targets.check(
      `50 hosts, ${hi} viewers: one stream per agent`,
      fifty.streams.min === 1 && fifty.streams.max === 1,
      `${fifty.streams.min}–${fifty.streams.max}`,
    );
  }
  targets.print();
}

runMain(main);
