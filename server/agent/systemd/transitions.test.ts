import { describe, expect, it } from "vitest";
import { firstObservation, isRestartCycleStep, liveTransition, predictsAutoRestart, reconcileTransitions } from "./transitions";
import type { UnitSnapshot } from "./unitProps";

const T0 = 1_796_017_275_000_000;

function snap(over: Partial<UnitSnapshot> = {}): UnitSnapshot {
  return {
    name: "vllm.service",
    activeState: "inactive",
    subState: "dead",
    result: "success",
    mainPid: 0,
    controlPid: 0,
    nRestarts: 0,
    stateChangeUsec: T0,
    inactiveExitUsec: 0,
    activeEnterUsec: 0,
    activeExitUsec: 0,
    inactiveEnterUsec: 0,
    job: null,
    restart: "no",
    execMainCode: 0,
    execMainStatus: 0,
    restartPreventExitStatus: { statuses: [], signals: [] },
    restartForceExitStatus: { statuses: [], signals: [] },
    ...over,
  };
}

/** Feed a sequence of snapshots through liveTransition the way the adapter does. */
function replay(snaps: UnitSnapshot[]) {
  const out = [];
  let prev: UnitSnapshot | null = null;
  for (const s of snaps) {
    const t = liveTransition(prev, s);
    if (t) out.push(t);
    prev = s;
  }
  return out;
}

describe("liveTransition", () => {
  it("reports a first observation with from=null at systemd's timestamp", () => {
    const t = liveTransition(null, snap({ activeState: "active", subState: "running", mainPid: 42 }))!;
    expect(t.from).toBeNull();
    expect(t.to).toEqual({ activeState: "active", subState: "running" });
    expect(t.atUsec).toBe(T0);
    expect(t.mainPid).toBe(42);
  });

  it("turns the slow ExecStartPre start into exactly two transitions, ignoring re-sent states", () => {
    const job = { id: 23, type: "start" };
    const ts = replay([
      snap(),
      snap({ job }), // job queued: re-sent inactive/dead
      snap({ activeState: "activating", subState: "start-pre", controlPid: 306, job, stateChangeUsec: T0 + 10 }),
      snap({ activeState: "activating", subState: "start-pre", controlPid: 306, job, stateChangeUsec: T0 + 10 }),
      snap({ activeState: "active", subState: "running", mainPid: 307, job, stateChangeUsec: T0 + 2_000_000 }),
      // job finished: systemd re-enters running and moves StateChangeTimestamp by ~0.6 ms
      snap({ activeState: "active", subState: "running", mainPid: 307, stateChangeUsec: T0 + 2_000_600 }),
    ]);
    expect(ts.map((t) => [t.from && `${t.from.activeState}/${t.from.subState}`, `${t.to.activeState}/${t.to.subState}`, t.atUsec])).toEqual([
      [null, "inactive/dead", T0],
      ["inactive/dead", "activating/start-pre", T0 + 10],
      ["activating/start-pre", "active/running", T0 + 2_000_000],
    ]);
    expect(ts[1]!.controlPid).toBe(306);
    expect(ts[2]!.mainPid).toBe(307);
    expect(ts.every((t) => !t.inRestartCycle)).toBe(true);
  });
});

describe("transition time", () => {
  it("uses the per-state timestamp when systemd re-entered the state before we heard of it", () => {
    // job finished and re-notified running 0.2 ms after ActiveEnterTimestamp, all before the signal
    const prev = snap({ activeState: "activating", subState: "start-pre", inactiveExitUsec: T0, stateChangeUsec: T0 });
    const next = snap({ activeState: "active", subState: "running", inactiveExitUsec: T0, activeEnterUsec: T0 + 1_500_000, stateChangeUsec: T0 + 1_500_200 });
    expect(liveTransition(prev, next)!.atUsec).toBe(T0 + 1_500_000);
    expect(reconcileTransitions(prev, next).map((t) => t.atUsec)).toEqual([T0 + 1_500_000]);
  });

  it("uses StateChangeTimestamp for a SubState change and ignores stale per-state timestamps", () => {
    const prev = snap({ activeState: "activating", subState: "start-pre", inactiveExitUsec: T0, stateChangeUsec: T0 });
    const next = snap({ activeState: "activating", subState: "start", inactiveExitUsec: T0, stateChangeUsec: T0 + 300 });
    expect(liveTransition(prev, next)!.atUsec).toBe(T0 + 300);
    // ActiveEnterTimestamp from an earlier run must not be taken for this one
    const old = snap({ activeState: "deactivating", subState: "stop-sigterm", activeEnterUsec: T0 - 50, stateChangeUsec: T0 });
    const back = snap({ activeState: "active", subState: "running", activeEnterUsec: T0 - 50, stateChangeUsec: T0 + 10 });
    expect(liveTransition(old, back)!.atUsec).toBe(T0 + 10);
  });
});

describe("Restart= cycles", () => {
  const onFailure = { restart: "on-failure" };

  it("tags the transient failed/failed, auto-restart and the restart job's dead state, not the final failure", () => {
    // Sequence measured on systemd 252 (ExecStart exits 1, Restart=on-failure, StartLimitBurst=3).
    const restartJob = { id: 62, type: "restart" };
    const ts = replay([
      snap({ ...onFailure, activeState: "active", subState: "running", mainPid: 313, nRestarts: 2 }),
      snap({
        ...onFailure,
        activeState: "failed",
        subState: "failed",
        result: "exit-code",
        execMainCode: 1,
        execMainStatus: 1,
        nRestarts: 2,
        stateChangeUsec: T0 + 1,
      }),
      snap({ ...onFailure, activeState: "activating", subState: "auto-restart", result: "exit-code", nRestarts: 2, stateChangeUsec: T0 + 2 }),
      snap({ ...onFailure, activeState: "activating", subState: "auto-restart", result: "exit-code", nRestarts: 3, job: restartJob, stateChangeUsec: T0 + 2 }),
      snap({ ...onFailure, activeState: "inactive", subState: "dead", result: "exit-code", nRestarts: 3, job: restartJob, stateChangeUsec: T0 + 3 }),
      snap({ ...onFailure, activeState: "failed", subState: "failed", result: "exit-code", nRestarts: 3, job: restartJob, stateChangeUsec: T0 + 4 }),
    ]);
    expect(ts.map((t) => [`${t.to.activeState}/${t.to.subState}`, t.inRestartCycle])).toEqual([
      ["active/running", false],
      ["failed/failed", true],
      ["activating/auto-restart", true],
      ["inactive/dead", true],
      ["failed/failed", false],
    ]);
  });

  it("does not tag failures that Restart= will not restart", () => {
    const failed = { activeState: "failed", subState: "failed", result: "exit-code", execMainCode: 1, execMainStatus: 1 };
    const running = snap({ activeState: "active", subState: "running" });
    expect(isRestartCycleStep(running, snap({ ...failed, restart: "no" }))).toBe(false);
    expect(isRestartCycleStep(running, snap({ ...failed, restart: "on-abnormal" }))).toBe(false);
    expect(isRestartCycleStep(running, snap({ ...failed, restart: "on-abnormal", result: "signal" }))).toBe(true);
    expect(isRestartCycleStep(running, snap({ ...failed, restart: "on-abort", result: "core-dump" }))).toBe(true);
    expect(isRestartCycleStep(running, snap({ ...failed, restart: "on-failure", result: "timeout" }))).toBe(true);
    // a failure from inactive (start refused) is never restarted
    expect(isRestartCycleStep(snap(), snap({ ...failed, restart: "on-failure" }))).toBe(false);
  });

  it("does not tag a manual stop or restart of a Restart=always service", () => {
    const running = snap({ restart: "always", activeState: "deactivating", subState: "stop-sigterm" });
    const dead = { restart: "always", activeState: "inactive", subState: "dead", result: "success" };
    expect(isRestartCycleStep(running, snap({ ...dead, job: { id: 5, type: "stop" } }))).toBe(false);
    expect(isRestartCycleStep(running, snap({ ...dead, job: { id: 5, type: "restart" } }))).toBe(false);
    // a stop job too quick to look up: deactivating → dead cleanly is still a stop
    expect(isRestartCycleStep(running, snap({ ...dead, job: { id: 5, type: "unknown" } }))).toBe(false);
    expect(isRestartCycleStep(running, snap(dead))).toBe(false);
    // but a start-pre timeout (deactivating, then failed) is restarted by on-failure
    expect(isRestartCycleStep(running, snap({ restart: "on-failure", activeState: "failed", subState: "failed", result: "timeout" }))).toBe(true);
    // a clean exit with no job around is restarted by Restart=always
    expect(isRestartCycleStep(snap({ restart: "always", activeState: "active", subState: "running" }), snap(dead))).toBe(true);
  });

  it("honours RestartPreventExitStatus and RestartForceExitStatus", () => {
    const base = { activeState: "failed", subState: "failed", result: "exit-code", execMainCode: 1, execMainStatus: 3 };
    expect(predictsAutoRestart(snap({ ...base, restart: "on-failure", restartPreventExitStatus: { statuses: [3], signals: [] } }))).toBe(false);
    expect(predictsAutoRestart(snap({ ...base, restart: "no", restartForceExitStatus: { statuses: [3], signals: [] } }))).toBe(true);
    expect(
      predictsAutoRestart(
        snap({ ...base, execMainCode: 2, execMainStatus: 9, result: "signal", restart: "always", restartPreventExitStatus: { statuses: [], signals: [9] } }),
      ),
    ).toBe(false);
    expect(predictsAutoRestart(snap({ ...base, restart: "on-failure", result: "start-limit-hit" }))).toBe(false);
    expect(predictsAutoRestart(snap({ ...base, restart: "" }))).toBe(false);
  });

  it("tags a first observation in auto-restart", () => {
    expect(firstObservation(snap({ activeState: "activating", subState: "auto-restart" })).inRestartCycle).toBe(true);
  });
});

describe("reconcileTransitions (after a gap)", () => {
  it("returns nothing when nothing changed (no duplicates after a reconnect)", () => {
    const s = snap({ activeState: "active", subState: "running", activeEnterUsec: T0, inactiveExitUsec: T0 - 5 });
    expect(reconcileTransitions(s, { ...s })).toEqual([]);
    // systemd re-entering the same state moves StateChangeTimestamp only a little: still nothing
    expect(reconcileTransitions(s, { ...s, stateChangeUsec: T0 + 600 })).toEqual([]);
  });

  it("reports one missed change exactly, with systemd's timestamp", () => {
    const prev = snap({ activeState: "activating", subState: "start-pre", controlPid: 9, inactiveExitUsec: T0 });
    const next = snap({
      activeState: "active",
      subState: "running",
      mainPid: 10,
      inactiveExitUsec: T0,
      activeEnterUsec: T0 + 2_000_000,
      stateChangeUsec: T0 + 2_000_000,
    });
    const ts = reconcileTransitions(prev, next);
    expect(ts).toHaveLength(1);
    expect(ts[0]).toMatchObject({
      from: { activeState: "activating", subState: "start-pre" },
      to: { activeState: "active", subState: "running" },
      atUsec: T0 + 2_000_000,
      mainPid: 10,
    });
  });

  it("reconstructs a whole stop/start cycle from the per-state timestamps", () => {
    const prev = snap({ activeState: "active", subState: "running", inactiveExitUsec: T0 - 10, activeEnterUsec: T0, stateChangeUsec: T0 });
    const next = snap({
      activeState: "active",
      subState: "running",
      nRestarts: 1,
      activeExitUsec: T0 + 100,
      inactiveEnterUsec: T0 + 200,
      inactiveExitUsec: T0 + 300,
      activeEnterUsec: T0 + 400,
      stateChangeUsec: T0 + 400,
    });
    const ts = reconcileTransitions(prev, next);
    expect(ts.map((t) => [t.from?.activeState, t.from?.subState, t.to.activeState, t.to.subState, t.atUsec])).toEqual([
      ["active", "running", "deactivating", "", T0 + 100],
      ["deactivating", "", "inactive", "", T0 + 200],
      ["inactive", "", "activating", "", T0 + 300],
      ["activating", "", "active", "running", T0 + 400],
    ]);
  });

  it("goes straight to the final state when only the pair changed", () => {
    const prev = snap({ activeState: "active", subState: "running", activeEnterUsec: T0 });
    const next = snap({ activeState: "active", subState: "reloading", activeEnterUsec: T0, stateChangeUsec: T0 + 50 });
    expect(reconcileTransitions(prev, next).map((t) => t.to.subState)).toEqual(["reloading"]);
  });
});
