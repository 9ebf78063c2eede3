import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HISTORY_DB_FILE, HistoryStore } from "./historyStore";
import { Hub, type SampleAttributor } from "./hub/hub";
import { type ActionRecord } from "../contract/events";
import { SampleHistory } from "./sampleHistory";
import type { GpuRawSample, GpuSample, UnitSummary, UnitTransition } from "../contract/types";
import type { HostAdapter, SystemdEvent } from "./adapter";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gpudeck-history-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const NOW_USEC = Date.now() * 1000;

function tr(unit: string, atUsec: number, from: string | null, to: string): UnitTransition {
  const pair = (s: string) => ({ activeState: s.split("/")[0]!, subState: s.split("/")[1]! });
  return { unit, atUsec, from: from ? pair(from) : null, to: pair(to), result: "success", mainPid: 0, controlPid: 0, nRestarts: 0, inRestartCycle: false };
}

function sample(atMs: number, usedMiB: number): GpuSample {
  return {
    atMs,
    gpus: [
      {
        index: 0,
        uuid: "GPU-0",
        name: "H200",
        memoryTotalMiB: 143_771,
        memoryUsedMiB: usedMiB,
        utilizationPct: 0,
        temperatureC: 30,
        powerW: 100,
        holders: [{ kind: "unit", pid: 4242, unit: "vllm-a.service", processName: "python3", cmdline: ["python3", "-m", "vllm"], state: "running", usedMiB }],
        unattributedMiB: 0,
      } as GpuSample["gpus"][number],
    ],
  };
}

describe("HistoryStore", () => {
  it("keeps transitions, actions and samples across close and reopen, newest per unit capped", () => {
    const store = HistoryStore.open(dir);
    for (let i = 0; i < 10; i++) store.addTransition(tr("a.service", NOW_USEC - (10 - i) * 1e6, null, i % 2 ? "active/running" : "inactive/dead"));
    store.addTransition(tr("b.service", NOW_USEC - 5e6, null, "failed/failed"));
    const action: ActionRecord = {
      id: "boot-a1",
      atMs: Date.now() - 1000,
      unit: "a.service",
      action: "restart",
      user: "alice",
      role: "operator",
      sourceAddr: "10.0.0.5",
      reason: "drain",
      jobId: 7,
      outcome: null,
      error: null,
    };
    store.saveAction(action);
    store.saveAction({ ...action, outcome: "done" }); // the job's result arrives later
    store.addSample(sample(Date.now() - 20_000, 1000));
    store.addSample(sample(Date.now() - 10_000, 2000));
    store.close();

    const again = HistoryStore.open(dir);
    const transitions = again.loadTransitions(4);
    expect(transitions.get("a.service")!.map((t) => t.atUsec)).toEqual([6, 7, 8, 9].map((i) => NOW_USEC - (10 - i) * 1e6));
    expect(transitions.get("b.service")).toHaveLength(1);
    expect(again.loadActions(0, 10)).toEqual([{ ...action, outcome: "done" }]);
    expect(again.loadSamples(0).map((s) => s.gpus[0]!.memoryUsedMiB)).toEqual([1000, 2000]);
    again.close();
  });

  it("creates its file 0600 and prunes what is past retention", () => {
    const store = HistoryStore.open(dir, { eventsMs: 60_000, samplesMs: 30_000 });
    expect(statSync(join(dir, HISTORY_DB_FILE)).mode & 0o777).toBe(0o600);
    const now = Date.now();
    store.addTransition(tr("a.service", (now - 120_000) * 1000, null, "active/running"));
    store.addTransition(tr("a.service", (now - 1_000) * 1000, "active/running", "inactive/dead"));
    // a unit that has not changed state for longer than retention keeps the state it is in
    store.addTransition(tr("idle.service", 0, null, "inactive/dead"));
    store.addTransition(tr("old.service", (now - 300_000) * 1000, null, "inactive/dead"));
    store.addTransition(tr("old.service", (now - 200_000) * 1000, "inactive/dead", "active/running"));
    store.addTransition(tr("b.service", 0, null, "inactive/dead"));
    store.addTransition(tr("b.service", (now - 100_000) * 1000, "inactive/dead", "activating/start"));
    store.addTransition(tr("b.service", (now - 90_000) * 1000, "activating/start", "failed/failed"));
    store.addTransition(tr("b.service", (now - 5_000) * 1000, "failed/failed", "activating/start"));
    store.addSample(sample(now - 40_000, 1));
    store.addSample(sample(now - 1_000, 2));
    expect(store.prune(now)).toBe(4);
    // kept: the state in force at the cutoff (60 s ago) and everything after it
    const kept = store.loadTransitions(100);
    expect([...kept].map(([unit, ts]) => `${unit}: ${ts.map((t) => t.to.activeState).join(",")}`)).toEqual([
      "a.service: active,inactive",
      "b.service: failed,activating",
      "idle.service: inactive",
      "old.service: active",
    ]);
    expect({
      transitions: [...kept.values()].reduce((n, ts) => n + ts.length, 0),
      actions: store.loadActions(0, 100).length,
      samples: store.loadSamples(0).length,
    }).toEqual({ transitions: 6, actions: 0, samples: 1 });
    store.close();
  });

  it("knows the spans between agent runs: from the last sign of life to the next start", () => {
    const store = HistoryStore.open(dir);
    store.beginRun("run-a", 1_000);
    store.touchRun("run-a", 6_000);
    store.touchRun("run-a", 4_000); // a late, older touch never moves it back
    store.beginRun("run-b", 66_000); // stopped at 6 s, next start at 66 s
    store.touchRun("run-b", 70_000);
    store.beginRun("run-c", 70_500); // a quick restart: under the minimum
    expect(store.loadGaps(1000)).toEqual([{ fromMs: 6_000, toMs: 66_000 }]);
    expect(store.loadGaps(100)).toEqual([
      { fromMs: 6_000, toMs: 66_000 },
      { fromMs: 70_000, toMs: 70_500 },
    ]);
    store.close();
  });

  it("says which file it cannot open", () => {
    writeFileSync(join(dir, HISTORY_DB_FILE), "this is not a database, it is a text file long enough to have a header…".repeat(20));
    expect(() => HistoryStore.open(dir)).toThrow(new RegExp(`cannot open the history store ${join(dir, HISTORY_DB_FILE)}`));
  });
});

// ---- the hub with a store: what an agent restart keeps -------------------------------------

class FakeSystemd {
  units = new Map<string, UnitSummary>();
  onEvent: ((e: SystemdEvent) => void) | null = null;
  onSample: ((s: GpuRawSample) => void) | null = null;
  rebuild: ((name: string, last: UnitTransition) => UnitTransition[]) | undefined;
  set(u: Partial<UnitSummary> & { name: string; activeState: string; subState: string; stateChangeUsec: number }) {
    const full: UnitSummary = {
      description: "",
      loadState: "loaded",
      unitFileState: "enabled",
      result: "success",
      mainPid: 0,
      controlPid: 0,
      nRestarts: 0,
      job: null,
      ...u,
    };
    const prev = this.units.get(u.name);
    this.units.set(u.name, full);
    this.onEvent?.({
      type: "transition",
      transition: tr(u.name, u.stateChangeUsec, prev ? `${prev.activeState}/${prev.subState}` : null, `${u.activeState}/${u.subState}`),
    });
    this.onEvent?.({ type: "unit", unit: full });
  }
  host(): HostAdapter {
    return fakeHost(this);
  }
}

function fakeHost(self: FakeSystemd): HostAdapter {
  return {
    kind: "real",
    systemd: {
      async start(onEvent) {
        self.onEvent = onEvent;
        // like the D-Bus adapter: every unit's first observation, from null
        for (const u of self.units.values()) {
          onEvent({ type: "transition", transition: tr(u.name, u.stateChangeUsec, null, `${u.activeState}/${u.subState}`) });
          onEvent({ type: "unit", unit: u });
        }
      },
      async close() {},
      status: () => ({ state: "ok", message: "", sinceMs: 0 }),
      list: () => [...self.units.values()],
      transitionsSince: self.rebuild ? (name, last) => self.rebuild!(name, last) : undefined,
      async get() {
        return null;
      },
      async act() {
        return { jobId: 1 };
      },
      async journal() {
        return [];
      },
      async *followJournal() {},
    },
    gpu: {
      start(onSample) {
        self.onSample = onSample;
      },
      async close() {},
      status: () => ({ state: "ok", message: "", sinceMs: 0 }),
    },
    procs: {
      async inspect() {
        throw new Error("not used");
      },
    },
  };
}

const passThrough: SampleAttributor = { attribute: async (raw: GpuRawSample) => raw as unknown as GpuSample };
const usec = (secondsAgo: number) => NOW_USEC - secondsAgo * 1e6;
const pairs = (ts: UnitTransition[]) => ts.map((t) => `${t.from ? `${t.from.activeState}/${t.from.subState}` : "∅"} → ${t.to.activeState}/${t.to.subState}`);

describe("Hub with a history store", () => {
  it("an agent restart keeps the timeline, the actions and the memory chart; what changed while it was down is added", async () => {
    const sd = new FakeSystemd();
    sd.set({ name: "vllm-a.service", activeState: "inactive", subState: "dead", stateChangeUsec: usec(600) });
    const store1 = HistoryStore.open(dir);
    const hub1 = new Hub(sd.host(), passThrough, new SampleHistory(), { store: store1 });
    await hub1.start();
    sd.set({ name: "vllm-a.service", activeState: "activating", subState: "start-pre", stateChangeUsec: usec(500) });
    sd.set({ name: "vllm-a.service", activeState: "active", subState: "running", stateChangeUsec: usec(400) });
    hub1.recordAction({ unit: "vllm-a.service", action: "start", user: "alice", role: "operator", sourceAddr: null, reason: "bring it up" }, { jobId: 41 });
    // one sample per 10 s goes to disk: of these three, the first and the third
    for (const [ago, used] of [
      [30_000, 5000],
      [25_000, 5100],
      [15_000, 5200],
    ] as const) {
      sd.onSample!(sample(Date.now() - ago, used) as unknown as GpuRawSample);
      await new Promise((r) => setImmediate(r));
    }
    const stoppedAtMs = Date.now();
    await hub1.close();
    store1.close();
    await new Promise((r) => setTimeout(r, 1100)); // a gap of over a second

    // while the agent is down the unit fails
    sd.onEvent = null;
    sd.units.set("vllm-a.service", {
      ...sd.units.get("vllm-a.service")!,
      activeState: "failed",
      subState: "failed",
      result: "signal",
      stateChangeUsec: usec(100),
    });

    const store2 = HistoryStore.open(dir);
    const logs: string[] = [];
    const hub2 = new Hub(sd.host(), passThrough, new SampleHistory(), { store: store2, log: (m) => logs.push(m) });
    await hub2.start();
    const { transitions, actions } = hub2.timeline("vllm-a.service");
    expect(pairs(transitions)).toEqual([
      "∅ → inactive/dead",
      "inactive/dead → activating/start-pre",
      "activating/start-pre → active/running",
      "active/running → failed/failed",
    ]);
    expect(transitions.at(-1)!.atUsec).toBe(usec(100));
    // the start's job never reported back to the first run: shown as unknown, not as running forever
    expect(actions).toMatchObject([{ user: "alice", reason: "bring it up", jobId: 41, outcome: "unknown" }]);
    expect(hub2.gpuHistory.since(0).map((s) => s.gpus[0]!.memoryUsedMiB)).toEqual([5000, 5200]);
    // stored folded per unit, as the charts use them
    expect(hub2.gpuHistory.since(0)[0]!.gpus[0]!.holders).toMatchObject([{ kind: "unit", unit: "vllm-a.service", usedMiB: 5000, cmdline: [] }]);
    expect(logs.join("\n")).toMatch(/restored 3 transitions of 1 units, 1 actions, 2 GPU samples/);
    // the time between the two runs is marked as not observed
    const [gap, ...more] = hub2.timeline("vllm-a.service").unobserved;
    expect(more).toEqual([]);
    expect(gap!.fromMs).toBeGreaterThanOrEqual(stoppedAtMs);
    expect(gap!.toMs).toBeGreaterThanOrEqual(gap!.fromMs);
    expect(gap!.toMs).toBeLessThanOrEqual(Date.now());
    await hub2.close();
    store2.close();
  });

  it("uses the adapter's reconstruction of the gap when it has one, and adds nothing when nothing changed", async () => {
    const sd = new FakeSystemd();
    sd.set({ name: "vllm-a.service", activeState: "active", subState: "running", stateChangeUsec: usec(300) });
    sd.set({ name: "vllm-b.service", activeState: "active", subState: "running", stateChangeUsec: usec(300) });
    const store1 = HistoryStore.open(dir);
    const hub1 = new Hub(sd.host(), passThrough, new SampleHistory(), { store: store1 });
    await hub1.start();
    await hub1.close();
    store1.close();

    // vllm-a was restarted while the agent was away: the same state again, entered later
    sd.onEvent = null;
    sd.units.set("vllm-a.service", { ...sd.units.get("vllm-a.service")!, stateChangeUsec: usec(50) });
    const asked: string[] = [];
    sd.rebuild = (name, last) => {
      asked.push(`${name} after ${last.to.activeState}/${last.to.subState}`);
      return name === "vllm-a.service"
        ? [
            tr(name, usec(60), "active/running", "inactive/"),
            tr(name, usec(55), "inactive/", "activating/"),
            tr(name, usec(50), "activating/", "active/running"),
          ]
        : [];
    };
    const store2 = HistoryStore.open(dir);
    const hub2 = new Hub(sd.host(), passThrough, new SampleHistory(), { store: store2 });
    await hub2.start();
    expect(asked.sort()).toEqual(["vllm-a.service after active/running", "vllm-b.service after active/running"]);
    expect(pairs(hub2.timeline("vllm-a.service").transitions)).toEqual([
      "∅ → active/running",
      "active/running → inactive/",
      "inactive/ → activating/",
      "activating/ → active/running",
    ]);
    expect(pairs(hub2.timeline("vllm-b.service").transitions)).toEqual(["∅ → active/running"]);
    await hub2.close();
    store2.close();
  });

  it("prunes every hour and keeps this run alive in the store, with or without GPU samples", async () => {
    vi.useFakeTimers();
    try {
      const sd = new FakeSystemd();
      sd.set({ name: "vllm-a.service", activeState: "inactive", subState: "dead", stateChangeUsec: usec(600) });
      const store = HistoryStore.open(dir);
      const hub = new Hub(sd.host(), passThrough, new SampleHistory(), { store });
      await hub.start();
      const startedMs = Date.now();
      store.addSample(sample(startedMs - 25 * 3600_000, 1)); // already past 24 h retention
      await vi.advanceTimersByTimeAsync(30 * 60_000);
      expect(store.loadSamples(0)).toHaveLength(1); // not yet: pruning is hourly
      await vi.advanceTimersByTimeAsync(31 * 60_000);
      expect(store.loadSamples(0)).toHaveLength(0);
      await hub.close();
      // the run was last seen at close: a next run's gap starts there
      store.beginRun("next", Date.now() + 60_000);
      expect(store.loadGaps()).toEqual([{ fromMs: Date.now(), toMs: Date.now() + 60_000 }]);
      store.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it("a store that stops accepting writes costs history, not the agent", async () => {
    const sd = new FakeSystemd();
    sd.set({ name: "vllm-a.service", activeState: "inactive", subState: "dead", stateChangeUsec: usec(600) });
    const store = HistoryStore.open(dir);
    const logs: string[] = [];
    const hub = new Hub(sd.host(), passThrough, new SampleHistory(), { store, log: (m) => logs.push(m) });
    await hub.start();
    expect(hub.historyState()).toBe("disk");
    store.close(); // every write now throws
    sd.set({ name: "vllm-a.service", activeState: "activating", subState: "start", stateChangeUsec: usec(10) });
    sd.set({ name: "vllm-a.service", activeState: "active", subState: "running", stateChangeUsec: usec(5) });
    expect(pairs(hub.timeline("vllm-a.service").transitions)).toHaveLength(3);
    expect(logs.filter((l) => l.includes("cannot write"))).toHaveLength(1);
    expect(logs[logs.length - 1]).toMatch(/history is kept in memory only/);
    expect(hub.historyState()).toBe("failing");
    await hub.close();
  });
});
