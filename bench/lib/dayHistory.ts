/**
 * A day of history for a simulated host, written into its history store before its agent starts
 * (`simHistory`, server/agent/config.ts), so the unit page has what a real agent that has run
 * for 24 h holds: the unit restarted every 15 minutes (stop, 30 s of start-pre while the killed
 * run's memory drains, a minute of loading), each restart an action marker; GPU samples at 1 Hz
 * for the last hour and one per 10 s before (what the agent keeps in memory), made from a live
 * sample of the same simulated host so GPUs, holders and units match.
 */
import type { ActionRecord } from "../../server/contract/events";
import type { GpuHolder, GpuSample, UnitTransition } from "../../server/contract/types";
import { HistoryStore } from "../../server/agent/historyStore";
import { compactSample } from "../../server/agent/sampleHistory";

const DAY_MS = 86_400_000;
const CYCLE_MS = 15 * 60_000;
const DRAIN_MS = 30_000;
const LOAD_MS = 60_000;

function pair(s: string) {
  const [activeState, subState] = s.split("/");
  return { activeState: activeState!, subState: subState! };
}

/** Fills `dataDir`'s store; returns how many samples and transitions it wrote. */
export function writeDayHistory(dataDir: string, unit: string, template: GpuSample, nowMs: number): { samples: number; transitions: number } {
  const store = HistoryStore.open(dataDir);
  const startMs = nowMs - DAY_MS;
  let transitions = 0;
  const transition = (atMs: number, from: string | null, to: string) => {
    const t: UnitTransition = {
      unit,
      atUsec: atMs * 1000,
      from: from ? pair(from) : null,
      to: pair(to),
      result: "success",
      mainPid: 0,
      controlPid: 0,
      nRestarts: 0,
      inRestartCycle: false,
    };
    store.addTransition(t);
    transitions++;
  };
  transition(startMs - 60_000, null, "active/running");
  for (let c = CYCLE_MS, n = 0; startMs + c < nowMs - LOAD_MS; c += CYCLE_MS, n++) {
    const at = startMs + c;
    const action: ActionRecord = {
      id: `bench-day-${n}`,
      atMs: at - 200,
      unit,
      action: "restart",
      user: "alice",
      role: "operator",
      sourceAddr: "10.0.0.1",
      reason: "bench: a day of restarts",
      jobId: 1000 + n,
      outcome: "done",
      error: null,
    };
    store.saveAction(action);
    transition(at, "active/running", "deactivating/stop-sigterm");
    transition(at + 1500, "deactivating/stop-sigterm", "inactive/dead");
    transition(at + 2000, "inactive/dead", "activating/start-pre");
    transition(at + 2000 + DRAIN_MS, "activating/start-pre", "active/running");
  }
  // memory of the unit through a cycle: draining (exited) during start-pre, then loading
  const base = compactSample(template);
  const sampleAt = (atMs: number): GpuSample => {
    const phase = (atMs - startMs) % CYCLE_MS;
    const draining = phase >= 2000 && phase < 2000 + DRAIN_MS ? 1 - (phase - 2000) / DRAIN_MS : 0;
    const loaded = phase < 2000 ? 1 : phase < 2000 + DRAIN_MS ? 0 : Math.min(1, (phase - 2000 - DRAIN_MS) / LOAD_MS);
    return {
      atMs,
      gpus: base.gpus.map((g) => {
        const holders: GpuHolder[] = [];
        for (const h of g.holders) {
          if (h.unit !== unit) holders.push(h);
          else {
            if (loaded > 0) holders.push({ ...h, usedMiB: Math.round(h.usedMiB * loaded) });
            if (draining > 0) holders.push({ ...h, kind: "exited", state: "gone", usedMiB: Math.round(h.usedMiB * draining) });
          }
        }
        const used = holders.reduce((a, h) => a + h.usedMiB, 0) + g.unattributedMiB;
        return {
          ...g,
          holders,
          memoryUsedMiB: g.memoryUsedMiB === null ? null : used,
          utilizationPct: g.utilizationPct === null ? null : Math.round(60 * loaded),
        };
      }),
    };
  };
  let samples = 0;
  for (let at = startMs; at < nowMs - 2000; at += at < nowMs - 3600_000 ? 10_000 : 1000) {
    store.addSample(sampleAt(at));
    samples++;
  }
  store.close();
  return { samples, transitions };
}
