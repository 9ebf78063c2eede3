import { describe, expect, it } from "vitest";
import { fault, operation, readiness } from "./eventFixtures";
import { gpuSample, hostSnapshot, hostUnit, summary, unit } from "./fixtures";
import { LiveStore } from "./store";

describe("LiveStore, fleet scope", () => {
  const fleet = () => {
    const store = new LiveStore({ watch: "fleet" });
    store.apply("fleet~p-0", {
      kind: "fleet-snapshot",
      hosts: [summary("gpu-b"), summary("gpu-a")],
      units: [hostUnit("gpu-a", "a.service"), hostUnit("gpu-b", "b.service", "failed", "failed"), hostUnit("gpu-a", "c.service")],
      atMs: 1,
    });
    return store;
  };

  it("keeps every host's summary and units, by host", () => {
    const store = fleet();
    expect(store.summaries().map((s) => s.name)).toEqual(["gpu-a", "gpu-b"]);
    expect([...store.host("gpu-a")!.units.keys()]).toEqual(["a.service", "c.service"]);
    expect(store.allUnits().map((u) => `${u.host}/${u.name}`)).toEqual(["gpu-b/b.service", "gpu-a/a.service", "gpu-a/c.service"]);
    expect(store.lastEventId).toBe("fleet~p-0");
    expect(store.snapshots).toBe(1);
  });

  it("a new fleet snapshot replaces everything: a host that is gone is gone", () => {
    const store = fleet();
    store.apply("fleet~p-9", { kind: "fleet-snapshot", hosts: [summary("gpu-a")], units: [hostUnit("gpu-a", "z.service")], atMs: 2 });
    expect(store.summaries().map((s) => s.name)).toEqual(["gpu-a"]);
    expect([...store.host("gpu-a")!.units.keys()]).toEqual(["z.service"]);
  });

  it("applies summaries, a host's unit list anew, and single units to their host", () => {
    const store = fleet();
    store.apply("fleet~p-1", { kind: "hosts", hosts: [summary("gpu-b", { state: "down", error: "connection refused" }), summary("gpu-new")] });
    expect(store.host("gpu-b")!.summary!.state).toBe("down");
    expect(store.host("gpu-b")!.isLive).toBe(false);
    // a down host keeps its last known units
    expect(store.host("gpu-b")!.units.get("b.service")!.activeState).toBe("failed");
    expect(store.host("gpu-new")!.units.size).toBe(0);

    store.apply("fleet~p-2", { kind: "host-units", host: "gpu-a", units: [unit("x.service")] });
    expect([...store.host("gpu-a")!.units.keys()]).toEqual(["x.service"]);
    store.apply("fleet~p-3", { kind: "unit", host: "gpu-b", unit: unit("b.service", "activating", "start-pre") });
    expect(store.host("gpu-b")!.units.get("b.service")!.subState).toBe("start-pre");
    // the same unit name on another host is another unit
    store.apply("fleet~p-4", { kind: "unit", host: "gpu-a", unit: unit("b.service", "inactive", "dead") });
    expect(store.host("gpu-b")!.units.get("b.service")!.activeState).toBe("activating");
    store.apply("fleet~p-5", { kind: "unit-removed", host: "gpu-a", name: "b.service" });
    expect(store.host("gpu-a")!.units.has("b.service")).toBe(false);
    // an admin removed a host: every fleet tab forgets it
    store.apply("fleet~p-6", { kind: "host-removed", host: "gpu-new" });
    expect(store.host("gpu-new")).toBeUndefined();
    expect(store.host("gpu-b")!.units.has("b.service")).toBe(true);
  });

  it("forgets a removed host, and tells its readers", () => {
    const store = fleet();
    const v = store.version;
    store.forgetHost("gpu-b");
    expect(store.host("gpu-b")).toBeUndefined();
    expect(store.version).toBeGreaterThan(v);
  });
});

describe("LiveStore, host scope", () => {
  it("a host snapshot replaces that host's state and counts as a snapshot (history is refetched)", () => {
    const store = new LiveStore({ watch: "host", host: "gpu-a" });
    store.apply("gpu-a~b1-5", hostSnapshot("gpu-a", [unit("a.service"), unit("b.service")], { gpu: gpuSample(1_000) }));
    const h = store.host("gpu-a")!;
    expect(h.snapshots).toBe(1);
    expect(h.units.size).toBe(2);
    expect(h.gpu!.atMs).toBe(1_000);
    expect(h.bootId).toBe("b1");

    store.apply("gpu-a~b1-6", { kind: "transition", host: "gpu-a", transition: transition("a.service") });
    store.apply("gpu-a~b1-7", { kind: "job", host: "gpu-a", job: { jobId: 7, unit: "a.service", jobType: "restart", phase: "running", atMs: 2 } });
    store.apply("gpu-a~b1-8", { kind: "gpu", host: "gpu-a", sample: gpuSample(2_000) });
    store.apply("gpu-a~b1-9", { kind: "status", host: "gpu-a", systemd: { state: "unreachable", message: "bus gone", sinceMs: 3 }, telemetry: h.telemetry! });
    expect(h.transitions).toHaveLength(1);
    expect(h.jobs.get(7)!.phase).toBe("running");
    expect(h.gpuRecent.map((s) => s.atMs)).toEqual([1_000, 2_000]);
    expect(h.systemd!.state).toBe("unreachable");

    // the agent restarted: its units anew, GPU samples kept in order, a second snapshot
    store.apply("gpu-a~b2-1", hostSnapshot("gpu-a", [unit("a.service", "activating", "start-pre")], { bootId: "b2", gpu: gpuSample(3_000) }));
    expect(store.host("gpu-a")).toBe(h);
    expect([...h.units.keys()]).toEqual(["a.service"]);
    expect(h.bootId).toBe("b2");
    expect(h.snapshots).toBe(2);
    expect(h.gpuRecent.map((s) => s.atMs)).toEqual([1_000, 2_000, 3_000]);
    expect(store.lastEventId).toBe("gpu-a~b2-1");
  });

  it("ignores events of hosts it does not watch, and keeps the watched host's summary current", () => {
    const store = new LiveStore({ watch: "host", host: "gpu-a" });
    store.apply("gpu-a~b1-1", hostSnapshot("gpu-a", [unit("a.service")]));
    store.apply("gpu-a~b1-1", { kind: "hosts", hosts: [summary("gpu-a", { state: "down", error: "agent gone" }), summary("gpu-b")] });
    store.apply("gpu-b~c-1", { kind: "unit", host: "gpu-b", unit: unit("b.service") });
    expect([...store.hosts.keys()]).toEqual(["gpu-a"]);
    expect(store.host("gpu-a")!.summary!.error).toBe("agent gone");
    // down: the units are the last known ones
    expect(store.host("gpu-a")!.units.has("a.service")).toBe(true);
  });

  it("drops GPU samples that are not newer than the last one (a replay after a reconnect)", () => {
    const store = new LiveStore({ watch: "host", host: "gpu-a" });
    store.apply("1", { kind: "gpu", host: "gpu-a", sample: gpuSample(2_000) });
    store.apply("2", { kind: "gpu", host: "gpu-a", sample: gpuSample(2_000) });
    store.apply("3", { kind: "gpu", host: "gpu-a", sample: gpuSample(1_500) });
    expect(store.host("gpu-a")!.gpuRecent.map((s) => s.atMs)).toEqual([2_000]);
  });
});

describe("LiveStore, unit scope", () => {
  it("holds the one unit of its host, its live events, and the host's GPU samples", () => {
    const store = new LiveStore({ watch: "unit", host: "gpu-a", name: "a.service" });
    store.apply("gpu-a~b1-3", hostSnapshot("gpu-a", [unit("a.service")], { gpu: gpuSample(1_000) }));
    store.apply("gpu-a~b1-4", {
      kind: "action",
      host: "gpu-a",
      action: {
        id: "x1",
        atMs: 5,
        unit: "a.service",
        action: "restart",
        user: "ada",
        role: "admin",
        sourceAddr: null,
        reason: "why",
        jobId: 9,
        outcome: null,
        error: null,
      },
    });
    const h = store.host("gpu-a")!;
    expect([...h.units.keys()]).toEqual(["a.service"]);
    expect(h.actions.get("x1")!.reason).toBe("why");
    expect(store.snapshots).toBe(1);
  });
});

describe("LiveStore, readiness, operations and faults", () => {
  it("a readiness event updates that unit's summary, on the fleet too; an unknown unit is ignored", () => {
    const store = new LiveStore({ watch: "fleet" });
    store.apply("f-0", { kind: "fleet-snapshot", hosts: [summary("gpu-a")], units: [hostUnit("gpu-a", "a.service")], atMs: 1 });
    const loading = readiness("loading", { stage: "loading weights", progress: { done: 37, total: 119 } });
    store.apply("f-1", { kind: "readiness", host: "gpu-a", unit: "a.service", readiness: loading });
    store.apply("f-2", { kind: "readiness", host: "gpu-a", unit: "gone.service", readiness: loading });
    const h = store.host("gpu-a")!;
    expect(h.units.get("a.service")!.readiness).toEqual(loading);
    expect(h.units.get("a.service")!.activeState).toBe("active");
    expect(h.units.has("gone.service")).toBe(false);
    // the lane gets a transition per state or stage change, not per progress step
    store.apply("f-3", { kind: "readiness", host: "gpu-a", unit: "a.service", readiness: { ...loading, progress: { done: 38, total: 119 } } });
    const graphs = readiness("loading", { stage: "capturing CUDA graphs", stageSinceMs: 9_000 });
    store.apply("f-4", { kind: "readiness", host: "gpu-a", unit: "a.service", readiness: graphs });
    store.apply("f-5", { kind: "unit", host: "gpu-a", unit: unit("a.service", "active", "running", { readiness: readiness("serving", { sinceMs: 12_000 }) }) });
    expect(h.readinessTransitions.map((t) => `${t.to.stage ?? t.to.state}@${t.atMs}`)).toEqual([
      "loading weights@1000",
      "capturing CUDA graphs@9000",
      "serving@12000",
    ]);
  });

  it("keeps the newest report of each operation, and each fault once", () => {
    const store = new LiveStore({ watch: "unit", host: "gpu-a", name: "a.service" });
    store.apply("1", { kind: "operation", host: "gpu-a", operation: operation("waiting-for-gpus", { atMs: 20_000, heldMiB: 500 }) });
    store.apply("2", { kind: "operation", host: "gpu-a", operation: operation("stopping", { atMs: 15_000 }) });
    store.apply("3", { kind: "operation", host: "gpu-a", operation: operation("waiting-for-gpus", { id: "b1-o2", atMs: 21_000 }) });
    const h = store.host("gpu-a")!;
    expect(h.operations.get("b1-o1")!.step).toBe("waiting-for-gpus");
    expect(h.operations.get("b1-o1")!.heldMiB).toBe(500);
    expect([...h.operations.keys()]).toEqual(["b1-o1", "b1-o2"]);
    store.apply("4", { kind: "fault", host: "gpu-a", fault: fault("b1-x1") });
    store.apply("5", { kind: "fault", host: "gpu-a", fault: fault("b1-x1") });
    expect(h.faults.map((f) => f.id)).toEqual(["b1-x1"]);
  });
});

describe("LiveStore, connection", () => {
  it("is off without a scope, connecting with one; problems clear with the next event", () => {
    expect(new LiveStore(null).connection).toBe("off");
    const store = new LiveStore({ watch: "host", host: "nope" });
    expect(store.connection).toBe("connecting");
    store.setProblem("There is no host named nope.");
    expect(store.problem).toMatch(/no host/);
    store.apply("nope~b-1", hostSnapshot("nope", []));
    expect(store.problem).toBeNull();
  });
});

function transition(name: string) {
  return {
    unit: name,
    atUsec: 2_000_000,
    from: { activeState: "active", subState: "running" },
    to: { activeState: "deactivating", subState: "stop-sigterm" },
    result: "success",
    mainPid: 1,
    controlPid: 0,
    nRestarts: 0,
    inRestartCycle: false,
  };
}
