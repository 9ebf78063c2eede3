/**
 * What the agent's history store costs: restoring a full store at start (30 days of
 * transitions for 8 units, 24 h of GPU samples at one per 10 s on 8 GPUs, 5 000 actions) and
 * the steady-state write of one sample. Compared in the same run with a baseline that does the
 * same work without SQLite (JSON.parse of the same rows from memory), so the numbers say what
 * the database itself adds on this machine.
 *
 *   node --import tsx bench/history-store.ts
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { incidentDay } from "@/components/gpu-chart/fixtures";
import { HISTORY_DB_FILE, HistoryStore } from "@/server/agent/historyStore";
import { compactSample } from "@/server/agent/sampleHistory";
import type { UnitTransition } from "@/server/contract/types";

const UNITS = 8;
const TRANSITIONS_PER_UNIT = 5_000; // the hub's in-memory cap
const SAMPLES = 8_640; // 24 h at one per 10 s
const ACTIONS = 5_000;
const RUNS = 5;

const dir = mkdtempSync(join(tmpdir(), "gpudeck-bench-history-"));
const now = Date.now();
const store = HistoryStore.open(dir);

const states = ["inactive/dead", "activating/start-pre", "activating/start", "active/running", "deactivating/stop-sigterm", "failed/failed"];
const transitions: UnitTransition[] = [];
for (let u = 0; u < UNITS; u++) {
  for (let i = 0; i < TRANSITIONS_PER_UNIT; i++) {
    const [a, s] = states[i % states.length]!.split("/");
    const [fa, fs] = states[(i + states.length - 1) % states.length]!.split("/");
    transitions.push({
      unit: `vllm-${u}.service`,
      atUsec: (now - 29 * 86_400_000 + i * 400_000 + u) * 1000,
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
const samples = incidentDay({ startMs: now - SAMPLES * 10_000, seconds: SAMPLES, gpus: 8, unit: "vllm-kimi-k25.service" }).map((s, i) =>
  compactSample({ ...s, atMs: now - (SAMPLES - i) * 10_000 }),
);

let t0 = performance.now();
for (const t of transitions) store.addTransition(t);
for (let i = 0; i < ACTIONS; i++) {
  store.saveAction({
    id: `bench-a${i}`,
    atMs: now - 29 * 86_400_000 + i * 60_000,
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

// baseline: the same rows as JSON text in memory, parsed without a database
const baselineRows = [...transitions.map((t) => JSON.stringify(t)), ...samples.map((s) => JSON.stringify(s))];

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const restore: number[] = [];
const baseline: number[] = [];
for (let r = 0; r < RUNS; r++) {
  const reopened = HistoryStore.open(dir);
  t0 = performance.now();
  const loaded = reopened.loadTransitions(TRANSITIONS_PER_UNIT);
  const actions = reopened.loadActions(now - 30 * 86_400_000, ACTIONS);
  const loadedSamples = reopened.loadSamples(now - 86_400_000);
  restore.push(performance.now() - t0);
  if (loaded.size !== UNITS || actions.length !== ACTIONS || loadedSamples.length !== SAMPLES) throw new Error("restore lost rows");
  reopened.close();
  t0 = performance.now();
  let n = 0;
  for (const row of baselineRows) n += (JSON.parse(row) as object) ? 1 : 0;
  baseline.push(performance.now() - t0);
  if (n !== baselineRows.length) throw new Error("baseline lost rows");
}

const one = compactSample(samples.at(-1)!);
const writes: number[] = [];
for (let i = 0; i < 200; i++) {
  t0 = performance.now();
  store.addSample({ ...one, atMs: now + i * 10_000 });
  writes.push(performance.now() - t0);
}
store.close();
const sizeMiB = statSync(join(dir, HISTORY_DB_FILE)).size / 1048576;
rmSync(dir, { recursive: true, force: true });

console.log(`history store: ${UNITS} units × ${TRANSITIONS_PER_UNIT} transitions, ${ACTIONS} actions, ${SAMPLES} GPU samples (8 GPUs)`);
console.log(
  `  fill (one row per call, as the agent writes): events ${fillEventsMs.toFixed(0)} ms, samples ${fillSamplesMs.toFixed(0)} ms; file ${sizeMiB.toFixed(1)} MiB`,
);
console.log(`  restore at agent start (median of ${RUNS}): ${median(restore).toFixed(0)} ms`);
console.log(
  `  baseline, JSON.parse of the same rows from memory: ${median(baseline).toFixed(0)} ms (the database adds ${(median(restore) - median(baseline)).toFixed(0)} ms)`,
);
console.log(`  one sample write (every 10 s): median ${median(writes).toFixed(3)} ms, max ${Math.max(...writes).toFixed(3)} ms`);
