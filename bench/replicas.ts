/**
 * Two panel replicas behind a balancer: N viewers per replica over 50 replayed hosts (host pages
 * and the overview, as bench/delivery.ts), both replicas on one PostgreSQL (the throw-away
 * cluster the replica tests use, server/store/testing/pgCluster.ts), each replica holding every
 * agent's stream (as designed today: replicas add viewers, not hosts). The balancer is the
 * viewers' own: each new stream goes to the next replica, as an L4 round-robin balancer does
 * per connection (no proxy process, which would take a share of the same two cores). Baseline in
 * the same run: one replica with the same number of viewers per replica, on the same database.
 *
 *   node --import tsx bench/replicas.ts [--smoke] [--viewers=1000] [--seconds=20] [--load=transition]
 * Needs PostgreSQL (Debian's postgresql package) and root (initdb runs as the postgres user).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pgUnavailable, startPgCluster } from "../server/store/testing/pgCluster";
import { numberArg, runMain, smoke } from "./lib/args";
import { printHeader } from "./lib/machine";
import { CpuWindow, PeakSampler, rssBytes } from "./lib/proc";
import { startPanelApi, startReplay, waitFor } from "./lib/replayFleet";
import { mib, ms, sleep } from "./lib/stats";
import { printTable, Targets } from "./lib/table";
import { ViewerLoad } from "./lib/viewerLoad";
import type { ViewerStats, ViewerTarget } from "./lib/viewers";

const PER_REPLICA = numberArg("viewers", 1000, 10);
const HOSTS = numberArg("hosts", 50, 3);
const MEASURE_S = numberArg("seconds", 20, 2);
const WARM_S = smoke ? 1 : 5;
/** --load=transition: a GPU sample and one transition per host per second (default: every event of a restart) */
const LOAD = process.argv.includes("--load=transition") ? "transition" : "restarts";

interface Row {
  replicas: number;
  viewers: number;
  connectS: number;
  stats: ViewerStats;
  cpu: number[];
  rss: number[];
  streams: { min: number; max: number };
}

function targets(urls: string[], hosts: string[], n: number): ViewerTarget[] {
  const list: ViewerTarget[] = [];
  for (let i = 0; list.length < n; i++) {
    const url = urls[i % urls.length]!;
    const input = Math.floor(i / urls.length) % 10 === 9 ? { watch: "fleet" } : { watch: "host", host: hosts[Math.floor(i / urls.length) % hosts.length]! };
    list.push({ url: `${url}/api/trpc/events.watch?input=${encodeURIComponent(JSON.stringify(input))}`, headers: {} });
  }
  return list;
}

async function main() {
  printHeader("Replicas: viewers over two panel replicas on one PostgreSQL", smoke);
  const why = pgUnavailable();
  if (why) {
    console.log(`SKIPPED: ${why}`);
    return;
  }
  console.log(
    `${HOSTS} replay hosts (a GPU sample and ${LOAD === "restarts" ? "every event of a unit restart" : "one transition"} per host per second); ${PER_REPLICA} viewers per replica, one in ten on the overview; ${WARM_S} s settle, ${MEASURE_S} s measured\n`,
  );
  const dir = mkdtempSync(path.join(tmpdir(), "gpudeck-bench-replicas-"));
  const pg = await startPgCluster();
  const replay = await startReplay(dir, HOSTS, LOAD, smoke ? 3 : 20);
  const rows: Row[] = [];
  try {
    for (const replicas of [1, 2]) {
      const env = { GPUDECK_DATABASE_URL: pg.url, GPUDECK_SECRET_KEY: "ab".repeat(32) };
      const before = await replay.streams();
      const panels = [];
      for (let i = 0; i < replicas; i++) panels.push(await startPanelApi(dir, replay.agents, [], env));
      const load = ViewerLoad.start();
      try {
        await waitFor("agent streams", async () => (await replay.streams()) >= before + replicas * HOSTS, 60_000);
        const n = PER_REPLICA * replicas;
        const t0 = performance.now();
        await load.set(
          targets(
            panels.map((p) => p.url),
            replay.agents.map((a) => a.name),
            n,
          ),
          n,
          60_000,
        );
        const connectS = (performance.now() - t0) / 1000;
        await sleep(WARM_S * 1000);
        const cpus = panels.map((p) => new CpuWindow(() => [p.proc.pid]));
        const rss = panels.map((p) => new PeakSampler(() => rssBytes(p.proc.pid)));
        await load.reset();
        cpus.forEach((c) => c.start());
        rss.forEach((r) => r.start());
        await sleep(MEASURE_S * 1000);
        const stats = await load.stats();
        const row = {
          replicas,
          viewers: n,
          connectS,
          stats,
          cpu: cpus.map((c) => c.stop().corePct),
          rss: rss.map((r) => r.stop()),
          streams: await replay.perAgent(HOSTS),
        };
        console.log(
          `  ${replicas} replica(s), ${n} viewers: ${stats.connected} connected in ${connectS.toFixed(1)} s, p95 ${ms(stats.all.p95)}, CPU ${row.cpu.map((c) => c.toFixed(0)).join(" + ")} %`,
        );
        rows.push(row);
      } finally {
        await load.close();
        for (const p of panels) await p.proc.stop();
      }
    }
  } finally {
    await replay.proc.stop();
    pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log("");
  printTable(
    [
      "replicas",
      "viewers",
      "connected",
      "p50",
      "p95",
      "max",
      "events/s per viewer",
      "panel CPU (each)",
      "panel RSS (each)",
      "streams per agent",
      "load gen CPU",
      "resets/ends/refused",
    ],
    rows.map((r) => [
      r.replicas,
      r.viewers,
      `${r.stats.connected} in ${r.connectS.toFixed(1)} s`,
      ms(r.stats.all.p50),
      ms(r.stats.all.p95),
      ms(r.stats.all.max),
      (r.stats.messages / Math.max(1, r.stats.connected) / Math.max(0.001, r.stats.wallS)).toFixed(1),
      r.cpu.map((c) => `${c.toFixed(0)} %`).join(" + "),
      r.rss.map((x) => mib(x)).join(" + "),
      r.streams.min === r.streams.max ? String(r.streams.min) : `${r.streams.min}–${r.streams.max}`,
      `${((100 * r.stats.cpuS) / Math.max(0.001, r.stats.wallS)).toFixed(0)} %`,
      `${r.stats.resets}/${r.stats.ends}/${r.stats.refused}`,
    ]),
  );
  const two = rows.find((r) => r.replicas === 2);
  const t = new Targets();
  if (two) {
    t.check(
      `2 replicas × ${PER_REPLICA} viewers: all connected`,
      two.stats.connected === two.viewers,
      `${two.stats.connected} in ${two.connectS.toFixed(1)} s`,
    );
    t.check(`2 replicas × ${PER_REPLICA} viewers: p95 ≤ 250 ms`, (two.stats.all.p95 ?? Infinity) <= 250, ms(two.stats.all.p95));
  }
  t.print();
}

runMain(main);
