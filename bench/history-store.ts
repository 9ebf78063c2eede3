/**
 * The agent's history store (agent-history.db, SQLite) at full size: 30 days of transitions for
 * 32 units (5 000 each, the hub's in-memory cap: a state change every ~9 minutes), 5 000
 * actions, 24 h of GPU samples on 8 GPUs at one per 10 s (what the store keeps). Measured: the
 * fill (one row per call, as the agent writes), the file size, the restore at agent start (the
 * store's own queries), the memory the restored history holds, the query for 24 h of one unit
 * (timeline + GPU samples: what units.timeline and gpus.history answer, from the hub's memory),
 * the same read from the file by SQL, and one sample write. Baseline in the same run: keeping it
 * in memory only (plain arrays: nothing to restore, lost at every restart), and JSON.parse of
 * the same rows (the least any file-based restore does).
 *
 *   node --import tsx bench/history-store.ts [--smoke]
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import Database from "better-sqlite3";
import { incidentDay } from "@/components/gpu-chart/fixtures";
import { HISTORY_DB_FILE, HistoryStore } from "@/server/agent/historyStore";
import { UnitStates } from "@/server/agent/hub/unitStates";
import { compactSample, SampleHistory } from "@/server/agent/sampleHistory";
import type { GpuSample, UnitTransition } from "@/server/contract/types";
import { runMain, smoke } from "./lib/args";
import { printHeader } from "./lib/machine";
import { median, mib, ms } from "./lib/stats";
import { printTable } from "./lib/table";

const UNITS = smoke ? 4 : 32;
const TRANSITIONS_PER_UNIT = smoke ? 200 : 5_000;
const DAYS = 30;
const SAMPLES = smoke ? 360 : 8_640; // 24 h at one per 10 s
const ACTIONS = smoke ? 200 : 5_000;
const RUNS = smoke ? 2 : 7;
const DAY_MS = 86_400_000;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

function timeit(fn: () => unknown, runs = RUNS): number {
  fn(); // warm-up
  const xs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    xs.push(performance.now() - t0);
  }
  return median(xs)!;
}

async function main() {
  printHeader(`History store: ${DAYS} days × ${UNITS} units, 24 h × 8 GPUs (SQLite) vs keeping it in memory`, smoke);
  const dir = mkdtempSync(join(tmpdir(), "gpudeck-bench-history-"));
  const now = Date.now();
  const store = HistoryStore.open(dir);
  const states = ["inactive/dead", "activating/start-pre", "activating/start", "active/running", "deactivating/stop-sigterm", "failed/failed"];
  const stepUsec = Math.floor((DAYS * DAY_MS * 1000) / TRANSITIONS_PER_UNIT);
  const transitions: UnitTransition[] = [];
  for (let u = 0; u < UNITS; u++) {
    for (let i = 0; i < TRANSITIONS_PER_UNIT; i++) {
      const [a, s] = states[i % states.length]!.split("/");
      const [fa, fs] = states[(i + states.length - 1) % states.length]!.split("/");
      transitions.push({
        unit: `vllm-${u}.service`,
        atUsec: (now - DAYS * DAY_MS) * 1000 + i * stepUsec + u,
        from: { activeState: fa!, subState: fs! },
        to: { activeState: a!, subState: s! },
        result: "success",
        mainPid: 1000 + i,
        controlPid: 0,
        nRestarts: 0,
        inRestartCycle: false,
      });
    }
  }
  const samples: GpuSample[] = incidentDay({ startMs: now - SAMPLES * 10_000, seconds: SAMPLES, gpus: 8, unit: "vllm-0.service" }).map((s, i) =>
    compactSample({ ...s, atMs: now - (SAMPLES - i) * 10_000 }),
  );

  let t0 = performance.now();
  for (const t of transitions) store.addTransition(t);
  for (let i = 0; i < ACTIONS; i++) {
    store.saveAction({
      id: `bench-a${i}`,
      atMs: now - (DAYS - 1) * DAY_MS + i * 60_000,
      unit: `vllm-${i % UNITS}.service`,
      action: "restart",
      user: "alice",
      role: "operator",
      sourceAddr: "10.0.0.1",
      reason: "bench",
      jobId: i,
      outcome: "done",
      error: null,
    });
  }
  const fillEventsMs = performance.now() - t0;
  t0 = performance.now();
  for (const s of samples) store.addSample(s);
  const fillSamplesMs = performance.now() - t0;
  store.close();
  const fileBytes = statSync(join(dir, HISTORY_DB_FILE)).size;

  // restore, as the hub does at start: the store's queries, into the hub's structures
  const restoreOnce = () => {
    const s = HistoryStore.open(dir);
    const loaded = s.loadTransitions(TRANSITIONS_PER_UNIT);
    const actions = s.loadActions(now - DAYS * DAY_MS, ACTIONS);
    const loadedSamples = s.loadSamples(now - DAY_MS);
    s.close();
    if (loaded.size !== UNITS || actions.length !== ACTIONS || loadedSamples.length < SAMPLES) throw new Error("restore lost rows");
    const unitStates = new UnitStates(TRANSITIONS_PER_UNIT);
    unitStates.restore(loaded);
    const history = new SampleHistory();
    history.restore(loadedSamples);
    return { unitStates, history, actions };
  };
  const restoreMs = timeit(restoreOnce);
  const rows = [...transitions.map((t) => JSON.stringify(t)), ...samples.map((s) => JSON.stringify(s))];
  const parseMs = timeit(() => rows.map((r) => JSON.parse(r) as unknown));

  const before = heap();
  const restored = restoreOnce();
  const restoredHeap = heap() - before;

  // 24 h of one unit: its transitions (and the one in force at the start) and the GPU samples
  const unit = `vllm-${Math.floor(UNITS / 2)}.service`;
  const sinceMs = now - DAY_MS;
  const queryHub = timeit(() => [restored.unitStates.timeline(unit, sinceMs * 1000), restored.history.since(sinceMs)], 21);
  const plain = { transitions, samples };
  const queryArrays = timeit(
    () => [plain.transitions.filter((t) => t.unit === unit && t.atUsec >= sinceMs * 1000), plain.samples.filter((s) => s.atMs >= sinceMs)],
    21,
  );
  const db = new Database(join(dir, HISTORY_DB_FILE), { readonly: true });
  const tq = db.prepare("SELECT body FROM transitions WHERE unit = ? AND at_usec >= ? ORDER BY at_usec");
  const sq = db.prepare("SELECT body FROM gpu_samples WHERE at_ms >= ? ORDER BY at_ms");
  const querySql = timeit(() => [
    (tq.all(unit, sinceMs * 1000) as { body: string }[]).map((r) => JSON.parse(r.body) as unknown),
    (sq.all(sinceMs) as { body: string }[]).map((r) => JSON.parse(r.body) as unknown),
  ]);
  db.close();
  const inDay = restored.unitStates.timeline(unit, sinceMs * 1000).length;
  const inDaySamples = restored.history.since(sinceMs).length;
  // steady state: one sample written every 10 s
  const writer = HistoryStore.open(dir);
  const one = samples.at(-1)!;
  const writes: number[] = [];
  for (let i = 0; i < 200; i++) {
    t0 = performance.now();
    writer.addSample({ ...one, atMs: now + (i + 1) * 10_000 });
    writes.push(performance.now() - t0);
  }
  writer.close();
  rmSync(dir, { recursive: true, force: true });

  console.log(
    `${UNITS} units × ${TRANSITIONS_PER_UNIT} transitions over ${DAYS} days, ${ACTIONS} actions, ${SAMPLES} GPU samples (8 GPUs, one per 10 s); ` +
      `24 h of ${unit}: ${inDay} transitions, ${inDaySamples} samples\n`,
  );
  printTable(
    ["", "gpudeck (SQLite store, hub memory)", "baseline: in memory only"],
    [
      ["restore at agent start (median)", ms(restoreMs), "none: history is lost at every restart"],
      ["JSON.parse of the same rows (least any file restore does)", ms(parseMs), "–"],
      ["file size", mib(fileBytes), "–"],
      ["memory the restored history holds (JS heap)", mib(restoredHeap), "the same (the same arrays)"],
      ["query: 24 h of one unit (timeline + GPU samples)", ms(queryHub), ms(queryArrays)],
      ["the same query on the file (SQL + JSON.parse)", ms(querySql), "–"],
      ["fill, one row per call (events / samples)", `${ms(fillEventsMs)} / ${ms(fillSamplesMs)}`, "–"],
      ["one sample write (every 10 s), median / max", `${ms(median(writes))} / ${ms(Math.max(...writes))}`, "0"],
    ],
  );
}

runMain(main);
