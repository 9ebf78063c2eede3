/**
 * What alerts and the status page cost the panel, against baselines in the same run:
 * - one pass of the rules over a fleet of 50 hosts × 40 units, against serializing the same
 *   units once (what the fan-out does for every browser event anyway);
 * - reconciling that fleet with the database (SQLite) when 100 alerts are open and nothing
 *   changed, the steady state every tick;
 * - a burst: 200 units failing at once → 200 alerts opened, grouped into 50 messages (one per host);
 * - uptime over 30 days for a unit that restarted every minute (43 200 transitions), against
 *   JSON.parse of that timeline (which the panel does anyway when the agent sends it).
 *
 *   node --import tsx bench/alerts.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openAlert, openAlertRows } from "@/server/alerts/alertStore";
import { batchNotifications } from "@/server/alerts/batcher";
import { conditionKey, FaultMemory, hostConditions, SinceClock, type HostView } from "@/server/alerts/conditions";
import { defaultRules } from "@/server/alerts/rules";
import type { UnitSummary, UnitTransition } from "@/server/contract/types";
import { openStore } from "@/server/store/database";
import { unitSteps, uptimes } from "@/server/statusPage/uptime";
import { smoke } from "./lib/args";
import { printHeader } from "./lib/machine";

const HOSTS = smoke ? 5 : 50;
const UNITS = smoke ? 8 : 40;
const RUNS = smoke ? 2 : 9;
const NOW = Date.now();

function time(fn: () => unknown): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}
async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}
printHeader("Alerts and the status page", smoke);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

function unit(h: number, u: number, failed: boolean): UnitSummary {
  return {
    name: `vllm-${u}.service`,
    description: `model ${u}`,
    activeState: failed ? "failed" : "active",
    subState: failed ? "failed" : "running",
    loadState: "loaded",
    unitFileState: "enabled",
    result: failed ? "exit-code" : "success",
    mainPid: 1000 + u,
    controlPid: 0,
    nRestarts: 0,
    stateChangeUsec: (NOW - 3_600_000 - h) * 1000,
    job: null,
  };
}

/** 2 failed units on each host: 100 open alerts in the steady state */
const fleet: HostView[] = Array.from({ length: HOSTS }, (_, h) => ({
  name: `gpu-${h}`,
  state: "connected",
  sinceMs: NOW - 86_400_000,
  error: null,
  bootId: "b",
  units: new Map(Array.from({ length: UNITS }, (_, u) => [`vllm-${u}.service`, unit(h, u, u < 2)] as const)),
  gpu: null,
  telemetry: { state: "ok", message: "", sinceMs: NOW - 86_400_000 },
}));

const rules = defaultRules();
const conditions = () => fleet.flatMap((h) => hostConditions(h, NOW, rules, new SinceClock(), new FaultMemory()));
const rulesMs = median(Array.from({ length: RUNS }, () => time(conditions)));
const serializeMs = median(Array.from({ length: RUNS }, () => time(() => fleet.map((h) => JSON.stringify([...h.units.values()])))));
console.log(`rules over ${HOSTS} hosts × ${UNITS} units: ${fmt(rulesMs)} per pass (baseline, serializing those units once: ${fmt(serializeMs)})`);

const dir = mkdtempSync(path.join(tmpdir(), "gpudeck-bench-alerts-"));
const store = await openStore({ dataDir: dir });
try {
  for (const c of conditions()) await openAlert(store, c, { silenced: false, diagnose: false });
  await batchNotifications(store, { windowMs: 0, diagnosisWaitMs: 0, panelUrl: "http://p", channelIds: async () => ["ch"] });
  // the steady state of a tick: read the open alerts, find every condition already open
  const steady: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    steady.push(
      await timeAsync(async () => {
        const open = new Set((await openAlertRows(store.db)).map(conditionKey));
        for (const c of conditions()) if (!open.has(conditionKey(c))) throw new Error("not open");
      }),
    );
  }
  const steadyMs = median(steady);
  console.log(`a tick with ${(await openAlertRows(store.db)).length} alerts open and nothing changed (rules + database, SQLite): ${fmt(steadyMs)}`);

  // a burst: 4 more units fail on every host
  const burst = fleet.flatMap((h) =>
    [2, 3, 4, 5].map((u) => ({
      rule: "unit-failed" as const,
      host: h.name,
      unit: `vllm-${u}.service`,
      severity: "critical" as const,
      summary: "x",
      sinceMs: NOW,
    })),
  );
  const openMs = await timeAsync(async () => {
    for (const c of burst) await openAlert(store, c, { silenced: false, diagnose: false });
  });
  let made = 0;
  const batchMs = await timeAsync(async () => {
    made = await batchNotifications(store, { windowMs: 0, diagnosisWaitMs: 0, panelUrl: "http://p", channelIds: async () => ["ch-a", "ch-b"] });
  });
  console.log(
    `a burst of ${burst.length} failures: opening the alerts ${fmt(openMs)} (${fmt(openMs / burst.length)} each), grouping into ${made} messages × 2 channels ${fmt(batchMs)}`,
  );
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

// uptime: 30 days of a unit restarting every minute
const transitions: UnitTransition[] = [];
for (let i = 0; i < (smoke ? 1_000 : 43_200); i++) {
  const at = NOW - 30 * 86_400_000 + i * 60_000;
  transitions.push({
    unit: "u",
    atUsec: at * 1000,
    from: null,
    to: { activeState: i % 2 ? "active" : "activating", subState: "" },
    result: "success",
    mainPid: 0,
    controlPid: 0,
    nRestarts: i,
    inRestartCycle: false,
  });
}
const wire = JSON.stringify({ transitions });
const uptimeMs = median(Array.from({ length: RUNS }, () => time(() => uptimes(unitSteps(transitions), NOW))));
const parseMs = median(Array.from({ length: RUNS }, () => time(() => JSON.parse(wire))));
console.log(`uptime over 24 h / 7 d / 30 d from ${transitions.length} transitions: ${fmt(uptimeMs)} (baseline, parsing that timeline: ${fmt(parseMs)})`);
