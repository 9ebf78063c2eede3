/**
 * `gpus.history` for 24 h of 8 GPUs, as the agent holds it (SampleHistory: 1 Hz for the last hour,
 * one per 10 s before; the incident fixture with utilisation, power, temperature and SM clock
 * varying every sample): JSON bytes and time to answer (select + downsample + JSON.stringify, the
 * agent's share), and the browser's decode. Baseline in the same run: the old paths — every
 * sample (what the unit page fetched before replies were thinned: tens of MB), and the thinned
 * reply without `points` (one sample per 4 min). After: the bucketed reply at 1,200 and 2,000
 * points (the unit page asks for about its width), the same without telemetry (memory and
 * holders only), and 15 min at 1,200 (the page's first view).
 *
 *   node --import tsx bench/history-reply.ts [--smoke] [--runs=7]
 */
import { incidentDay } from "@/components/gpu-chart/fixtures";
import { gpuHistoryReply } from "@/server/agent/gpuHistoryReply";
import { SampleHistory } from "@/server/agent/sampleHistory";
import { decodeGpuHistory, isGpuHistorySeries } from "@/server/contract/gpuHistory";
import { numberArg, runMain, smoke } from "./lib/args";
import { printHeader } from "./lib/machine";
import { median } from "./lib/stats";
import { printTable, Targets } from "./lib/table";

const RUNS = numberArg("runs", 7, 2);
const SECONDS = smoke ? 6 * 3600 : 24 * 3600;
const DAY_MS = 86_400_000;

function timed<T>(fn: () => T): { ms: number; value: T } {
  fn(); // warm-up
  const xs: number[] = [];
  let value!: T;
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    value = fn();
    xs.push(performance.now() - t0);
  }
  return { ms: median(xs)!, value };
}

async function main() {
  printHeader(`gpus.history: ${SECONDS / 3600} h × 8 GPUs, every sample / thinned (old) vs bucketed at the chart's width (new)`, smoke);
  const end = Date.now();
  const history = new SampleHistory();
  const memoryOnly = new SampleHistory(); // telemetry not reported: issue 21's target was set for memory and holders
  for (const s of incidentDay({ startMs: end - SECONDS * 1000 + 1000, seconds: SECONDS, gpus: 8, unit: "vllm-kimi-k25.service" })) {
    memoryOnly.push({ ...s, gpus: s.gpus.map((g) => ({ ...g, utilizationPct: null, temperatureC: null, powerW: null })) });
    const t = (s.atMs / 1000) | 0;
    for (const g of s.gpus) {
      const i = g.index ?? 0;
      g.utilizationPct = (t * 3 + i * 7) % 101;
      g.memoryUtilizationPct = (t * 5 + i) % 60;
      g.temperatureC = 40 + ((t + i) % 35);
      g.powerW = 150 + ((t * 11 + i * 3) % 550) + 0.37;
      g.powerLimitW = 700;
      g.smClockMHz = 1200 + ((t * 13) % 780);
      g.smClockMaxMHz = 1980;
    }
    history.push(s);
  }
  const sinceDay = end - SECONDS * 1000;
  const cases: { name: string; run: () => string }[] = [
    { name: "every sample (old unit page)", run: () => JSON.stringify(history.since(sinceDay)) },
    { name: "thinned, no points (old gpus.history)", run: () => JSON.stringify(gpuHistoryReply(history, { sinceMs: sinceDay })) },
    { name: "bucketed, 2,000 points", run: () => JSON.stringify(gpuHistoryReply(history, { sinceMs: sinceDay, untilMs: end, points: 2000 })) },
    {
      name: "memory only, 2,000 points",
      run: () => JSON.stringify(gpuHistoryReply(memoryOnly, { sinceMs: sinceDay, untilMs: end, points: 2000 })),
    },
    { name: "bucketed, 1,200 points", run: () => JSON.stringify(gpuHistoryReply(history, { sinceMs: sinceDay, untilMs: end, points: 1200 })) },
    { name: "15 min, 1,200 points", run: () => JSON.stringify(gpuHistoryReply(history, { sinceMs: end - 15 * 60_000, untilMs: end, points: 1200 })) },
  ];
  const rows: (string | number)[][] = [];
  const bytesOf = new Map<string, number>();
  const answerOf = new Map<string, number>();
  for (const c of cases) {
    const { ms, value } = timed(c.run);
    const parsedOnce = JSON.parse(value) as unknown;
    const decode = timed(() => {
      const parsed = JSON.parse(value) as unknown;
      return isGpuHistorySeries(parsed) ? decodeGpuHistory(parsed).length : (parsed as unknown[]).length;
    });
    const bytes = Buffer.byteLength(value);
    bytesOf.set(c.name, bytes);
    answerOf.set(c.name, ms);
    const rowsOut = isGpuHistorySeries(parsedOnce) ? decodeGpuHistory(parsedOnce).length : (parsedOnce as unknown[]).length;
    rows.push([c.name, rowsOut, (bytes / 1e3).toFixed(1), ms.toFixed(1), decode.ms.toFixed(1)]);
  }
  printTable(["reply", "rows", "JSON KB", "answer ms (agent)", "parse + decode ms (browser)"], rows);
  const targets = new Targets();
  const b2000 = bytesOf.get("bucketed, 2,000 points")!;
  const m2000 = bytesOf.get("memory only, 2,000 points")!;
  if (SECONDS * 1000 >= DAY_MS) {
    targets.check("24 h × 8 GPUs at 2,000 points ≤ 300 KB of JSON (memory and holders)", m2000 <= 300_000, `${(m2000 / 1e3).toFixed(0)} KB`);
    targets.check(
      "the same with 7 telemetry lanes changing every sample ≤ 300 KB",
      b2000 <= 300_000,
      `${(b2000 / 1e3).toFixed(0)} KB; real telemetry changes less often than this fixture's`,
    );
  }
  const old = answerOf.get("every sample (old unit page)")!;
  const now = answerOf.get("bucketed, 2,000 points")!;
  console.log(`24 h answer: ${old.toFixed(0)} ms for every sample → ${now.toFixed(0)} ms bucketed (${(old / now).toFixed(1)}×)`);
  targets.print();
}

runMain(main);
