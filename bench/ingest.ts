/**
 * Ingest: what the panel pays per connected agent with nobody watching. N replay agents
 * (bench/lib/replayAgents.ts: one process, a real agent's recorded stream re-stamped, the
 * agent's wire protocol and token) each send a GPU sample a second (8 GPUs, 32 holders) and one
 * unit transition a second; the panel (bench/lib/panelApi.ts: server/panel/serve.ts's server,
 * the fleet hub, without Next's pages) holds one stream per agent. Measured at each N: the
 * panel's CPU (all of it: streams, summaries, alert rules, audit, database) and peak RSS.
 * Baseline in the same run: the floor, a process that only opens the same N streams and
 * JSON.parses each event (bench/lib/floorIngest.ts).
 *
 *   node --import tsx bench/ingest.ts [--smoke] [--hosts=50,200,500] [--seconds=20] [--load=restarts] [--cpu-prof]
 * --cpu-prof writes the panel's V8 CPU profile of each level to .bench-prof/ (open in Chrome's
 * DevTools or speedscope).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { runMain, smoke } from "./lib/args";
import { printHeader } from "./lib/machine";
import { CpuWindow, PeakSampler, rssBytes } from "./lib/proc";
import { Proc, ROOT } from "./lib/processes";
import { startPanelApi, startReplay, waitFor, type ReplayFleet } from "./lib/replayFleet";
import { mib, sleep } from "./lib/stats";
import { printTable, Targets, type Cell } from "./lib/table";

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
const HOSTS = listArg("hosts", [50, 200, 500], [3]);
const MEASURE_S = listArg("seconds", [20], [1])[0]!;
const WARM_S = smoke ? 1 : 5;
const PROFILE = process.argv.includes("--cpu-prof");
/** --load=restarts: every event of a unit restart each second (jobs, readiness stages, actions), as the demo's bench drives it */
const LOAD = process.argv.find((a) => a.startsWith("--load="))?.slice(7) === "restarts" ? "restarts" : "transition";

interface Level {
  hosts: number;
  connectS: number;
  panelCpuPct: number;
  panelRss: number;
  replayCpuPct: number;
  floorCpuPct: number;
}

async function level(dir: string, replay: ReplayFleet, hosts: number): Promise<Level> {
  const agents = replay.agents.slice(0, hosts);
  const prof = path.join(ROOT, ".bench-prof");
  if (PROFILE) mkdirSync(prof, { recursive: true });
  const extra = PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${prof}`, `--cpu-prof-name=ingest-${hosts}-${Date.now()}.cpuprofile`] : [];
  const before = await replay.streams();
  const panel = await startPanelApi(dir, agents, extra);
  let floor: Proc | null = null;
  try {
    const connectS = await waitFor(`${hosts} agent streams`, async () => (await replay.streams()) >= before + hosts, 120_000);
    await sleep(WARM_S * 1000);
    const pid = panel.proc.pid;
    const cpu = new CpuWindow(() => [pid]);
    const rcpu = new CpuWindow(() => [replay.proc.pid]);
    const rss = new PeakSampler(() => rssBytes(pid));
    cpu.start();
    rcpu.start();
    rss.start();
    await sleep(MEASURE_S * 1000);
    const panelCpuPct = cpu.stop().corePct;
    const replayCpuPct = rcpu.stop().corePct;
    const panelRss = rss.stop();
    await panel.proc.stop();
    // the baseline over the same agents, the panel gone
    const file = path.join(dir, `floor-${hosts}.json`);
    writeFileSync(file, JSON.stringify(agents));
    floor = (await Proc.node("floor", ["bench/lib/floorIngest.ts", file], { ...process.env }, /^\[floor\] \d+ streams open/, 120_000)).proc;
    await sleep(WARM_S * 1000);
    const fpid = floor.pid;
    const fcpu = new CpuWindow(() => [fpid]);
    fcpu.start();
    await sleep(MEASURE_S * 1000);
    const floorCpuPct = fcpu.stop().corePct;
    const r = { hosts, connectS, panelCpuPct, panelRss, replayCpuPct, floorCpuPct };
    console.log(
      `  ${hosts} hosts: panel ${panelCpuPct.toFixed(1)} % of a core (${(panelCpuPct / hosts).toFixed(3)} % per host), ${mib(panelRss)}; floor ${floorCpuPct.toFixed(1)} %; replay ${replayCpuPct.toFixed(1)} %`,
    );
    return r;
  } finally {
    await panel.proc.stop();
    await floor?.stop();
  }
}

async function main() {
  printHeader("Ingest: the panel's CPU per connected agent, nobody watching", smoke);
  console.log(
    `hosts ${HOSTS.join(", ")}; replay agents: a GPU sample (8 GPUs, 32 holders) and ${LOAD === "restarts" ? "every event of a unit restart (~25 events)" : "a unit transition"} per host per second; each level: ${WARM_S} s settle, then ${MEASURE_S} s measured\n`,
  );
  const dir = mkdtempSync(path.join(tmpdir(), "gpudeck-bench-ingest-"));
  const replay = await startReplay(dir, Math.max(...HOSTS), LOAD, smoke ? 3 : 20);
  const results: Level[] = [];
  try {
    for (const n of HOSTS) results.push(await level(dir, replay, n));
  } finally {
    await replay.proc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log("");
  const rows: Cell[][] = results.map((r) => [
    r.hosts,
    `${r.connectS.toFixed(1)} s`,
    `${r.panelCpuPct.toFixed(1)} %`,
    `${(r.panelCpuPct / r.hosts).toFixed(3)} %`,
    mib(r.panelRss),
    `${r.floorCpuPct.toFixed(1)} %`,
    `${(r.panelCpuPct / Math.max(0.1, r.floorCpuPct)).toFixed(1)}×`,
    `${r.replayCpuPct.toFixed(1)} %`,
  ]);
  printTable(["hosts", "all streams up", "panel CPU", "per host", "panel RSS", "baseline: parse only", "panel / baseline", "replay agents CPU"], rows);
  console.log("CPU in % of one core over the window; RSS: the panel's peak; the baseline opens the same streams and JSON.parses every event, nothing else\n");
  const targets = new Targets();
  for (const r of results)
    targets.check(`${r.hosts} hosts: ≤ 0.2 % of a core per host`, r.panelCpuPct / r.hosts <= 0.2, `${(r.panelCpuPct / r.hosts).toFixed(3)} %`);
  const top = results.find((r) => r.hosts === 500);
  if (top) targets.check("500 hosts: panel RSS ≤ 1 GB", top.panelRss <= 1024 * 2 ** 20, mib(top.panelRss));
  targets.print();
}

runMain(main);
