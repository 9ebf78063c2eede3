import { describe, expect, it } from "vitest";
import { decideHeal, HealLimiter, type HealFacts } from "./policy";

const MIN = 60_000;
const settings = { healAfterMs: 5 * MIN, healMax: 2 };

/** A serving vLLM whose probe has failed since t=0, at `nowMs`. */
function facts(nowMs: number, over: Partial<HealFacts> = {}): HealFacts {
  return {
    nowMs,
    activeState: "active",
    subState: "running",
    jobRunning: false,
    readinessState: "not-serving",
    servedInRun: true,
    failing: { count: 12, sinceMs: 0 },
    operation: null,
    crashLoop: false,
    ...over,
  };
}

describe("self-heal rules", () => {
  it("acts once the probe has failed for healAfter on a unit that was serving, systemd still calling it active", () => {
    expect(decideHeal(facts(5 * MIN - 1), settings, 0)).toEqual({ kind: "wait" });
    expect(decideHeal(facts(5 * MIN), settings, 0)).toEqual({ kind: "heal", failedForMs: 5 * MIN });
  });

  it("never for a unit that did not serve in this run, is not active, has a job queued, or is loading", () => {
    const at = 10 * MIN;
    expect(decideHeal(facts(at, { servedInRun: false }), settings, 0).kind).toBe("wait");
    expect(decideHeal(facts(at, { activeState: "activating", subState: "start" }), settings, 0).kind).toBe("wait");
    expect(decideHeal(facts(at, { activeState: "failed", subState: "failed" }), settings, 0).kind).toBe("wait");
    expect(decideHeal(facts(at, { jobRunning: true }), settings, 0).kind).toBe("wait");
    expect(decideHeal(facts(at, { readinessState: "loading" }), settings, 0).kind).toBe("wait");
    expect(decideHeal(facts(at, { failing: null }), settings, 0).kind).toBe("wait");
  });

  it("holds back while a person's operation runs and under the crash-loop brake, saying why", () => {
    const op = decideHeal(facts(10 * MIN, { operation: { id: "b-o3", user: "alice", step: "waiting-for-gpus" } }), settings, 0);
    expect(op).toEqual({
      kind: "held-back",
      why: "operation",
      message: "Not restarted by self-heal: a GPU-aware operation by alice is running (operation b-o3, waiting-for-gpus).",
    });
    const loop = decideHeal(facts(10 * MIN, { crashLoop: true }), settings, 0);
    expect(loop).toMatchObject({ kind: "held-back", why: "crash-loop" });
  });

  it("at most healMax restarts an hour, on a fake clock: the third waits until the first leaves the hour", () => {
    const limiter = new HealLimiter();
    const unit = "vllm-a.service";
    let now = 0;
    const decide = () => decideHeal(facts(now, { failing: { count: 3, sinceMs: now - 5 * MIN } }), settings, limiter.recent(unit, now).length);
    expect(decide().kind).toBe("heal");
    limiter.record(unit, now);
    now += 10 * MIN;
    expect(decide().kind).toBe("heal");
    limiter.record(unit, now);
    now += 10 * MIN;
    expect(decide()).toEqual({
      kind: "held-back",
      why: "limit",
      message: "Not restarted by self-heal: it already restarted it 2 times in the last hour (healMax 2).",
    });
    expect(limiter.nextSlotMs(unit, now)).toBe(60 * MIN);
    now = 60 * MIN - 1;
    expect(decide().kind).toBe("held-back");
    now = 60 * MIN;
    expect(decide().kind).toBe("heal");
    expect(limiter.recent(unit, now)).toEqual([10 * MIN]);
    // another unit has its own count
    expect(limiter.recent("other.service", now)).toEqual([]);
  });
});
