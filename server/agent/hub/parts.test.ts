import { describe, expect, it } from "vitest";
import type { UnitTransition } from "../../contract/types";
import { ActionLog } from "./actionLog";
import { EventRing } from "./eventRing";
import { UnitStates } from "./unitStates";

const status = { state: "ok" as const, message: "", sinceMs: 0 };
const ev = () => ({ kind: "status" as const, systemd: status, telemetry: status });

describe("EventRing", () => {
  it("replays after an id of this boot, and gives null for another boot, an unknown future id or one dropped from the ring", () => {
    const ring = new EventRing("abc123", 3);
    for (let i = 0; i < 5; i++) ring.emit(ev());
    expect(ring.currentEventId()).toBe("abc123-5");
    expect(ring.replayAfter("abc123-3")!.map((e) => e.id)).toEqual(["abc123-4", "abc123-5"]);
    expect(ring.replayAfter("abc123-5")).toEqual([]);
    expect(ring.replayAfter("abc123-1")).toBeNull(); // 2 was dropped: a replay would have a hole
    expect(ring.replayAfter("abc123-9")).toBeNull();
    expect(ring.replayAfter("ffff-3")).toBeNull();
    expect(ring.replayAfter("garbage")).toBeNull();
    expect(ring.replayAfter(null)).toBeNull();
  });

  it("keeps GPU samples out of the replay (they get ids, a resuming client gets the next one), without breaking replay across them", () => {
    const ring = new EventRing("ab", 2);
    const gpu = { kind: "gpu" as const, sample: { atMs: 1, gpus: [] } };
    ring.emit(ev()); // 1
    for (let i = 0; i < 5; i++) ring.emit(gpu); // 2..6
    ring.emit(ev()); // 7
    expect(ring.replayAfter("ab-1")!.map((e) => e.id)).toEqual(["ab-7"]);
    expect(ring.replayAfter("ab-4")!.map((e) => e.id)).toEqual(["ab-7"]);
    ring.emit(ev()); // 8: the ring (2) drops event 1
    expect(ring.replayAfter("ab-0")).toBeNull();
    expect(ring.replayAfter("ab-1")!.map((e) => e.id)).toEqual(["ab-7", "ab-8"]);
  });

  it("tells listeners of each event and forgets them on unsubscribe", () => {
    const ring = new EventRing("b");
    const seen: string[] = [];
    const off = ring.subscribe((e) => seen.push(e.id));
    ring.emit(ev());
    off();
    ring.emit(ev());
    expect(seen).toEqual(["b-1"]);
    expect(ring.subscriberCount()).toBe(0);
  });
});

function tr(atUsec: number, active: string, sub: string, from: UnitTransition["from"] = { activeState: "x", subState: "y" }): UnitTransition {
  return {
    unit: "u.service",
    atUsec,
    from,
    to: { activeState: active, subState: sub },
    result: "success",
    mainPid: 0,
    controlPid: 0,
    nRestarts: 0,
    inRestartCycle: false,
  };
}

describe("UnitStates", () => {
  it("drops repeats of the same state and keeps out-of-order transitions sorted", () => {
    const accepted: number[] = [];
    const states = new UnitStates(10, (t) => accepted.push(t.atUsec));
    expect(states.apply(tr(10, "activating", "start-pre"), () => undefined)).toHaveLength(1);
    expect(states.apply(tr(11, "activating", "start-pre"), () => undefined)).toHaveLength(0);
    states.apply(tr(30, "active", "running"), () => undefined);
    states.apply(tr(20, "activating", "start"), () => undefined);
    expect(states.timeline("u.service").map((t) => t.atUsec)).toEqual([10, 20, 30]);
    expect(accepted).toEqual([10, 30, 20]);
  });

  it("keeps the transition in force at `since`, and joins a restored unit's first observation to its history", () => {
    const states = new UnitStates();
    states.restore(new Map([["u.service", [tr(5, "active", "running")]]]));
    const rebuilt = [tr(50, "inactive", "dead"), tr(60, "active", "running")];
    expect(states.apply(tr(60, "active", "running", null), () => rebuilt).map((t) => t.atUsec)).toEqual([50, 60]);
    expect(states.timeline("u.service", 55).map((t) => t.atUsec)).toEqual([50, 60]);
  });
});

describe("ActionLog", () => {
  const base = { unit: "u.service", action: "restart" as const, user: "ada", role: "admin", sourceAddr: null, reason: null };

  it("joins a job result that arrived before the action was recorded", () => {
    const log = new ActionLog("boot");
    expect(log.jobFinished({ jobId: 7, unit: "u.service", jobType: "restart", phase: "finished", result: "done", atMs: 1 })).toBeNull();
    expect(log.record(base, { jobId: 7 }).outcome).toBe("done");
  });

  it("sets the outcome when the job ends later, and records refusals as errors", () => {
    const log = new ActionLog("boot");
    const rec = log.record(base, { jobId: 8 });
    expect(rec.outcome).toBeNull();
    expect(log.jobFinished({ jobId: 8, unit: "u.service", jobType: "restart", phase: "finished", result: "failed", atMs: 2 })?.outcome).toBe("failed");
    expect(log.record(base, { error: "systemd is unreachable" })).toMatchObject({ outcome: "error", error: "systemd is unreachable", jobId: null });
  });

  it("marks restored actions whose job end was never seen as unknown", () => {
    const log = new ActionLog("boot");
    log.restore([{ ...base, id: "x", atMs: 1, jobId: 3, outcome: null, error: null }]);
    expect(log.recent()[0]).toMatchObject({ outcome: "unknown", error: "the agent restarted before this job finished" });
  });
});
