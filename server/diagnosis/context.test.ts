import { describe, expect, it } from "vitest";
import { buildContext, perCall } from "./context";
import { ago, facts, transitions, unit, usec } from "./fixtures";
import { lastFailure } from "./lastFailure";

describe("buildContext", () => {
  it("keeps only this unit's transitions (and unnamed ones), oldest first, and notes the last", () => {
    const own = transitions("inactive/dead", [
      [ago(30), "activating/start-pre"],
      [ago(20), "active/running"],
    ]);
    const other = transitions("active/running", [[ago(10), "failed/failed"]], "other.service");
    const unnamed = transitions("active/running", [[ago(5), "active/running"]], "");
    const f = facts({ recentTransitions: [...own, ...other, ...unnamed] });
    const ctx = buildContext(f, f.unit!);
    expect(ctx.transitions).toEqual([...own, ...unnamed]);
    expect(ctx.lastTransition).toEqual(unnamed[0]);
    expect(ctx.name).toBe(f.unit!.name);
    expect(ctx.now).toBe(f.nowMs);
  });

  it("state entered: StateChangeTimestamp, else the last transition into the current state, else unknown", () => {
    const recent = transitions("inactive/dead", [
      [ago(30), "active/running"],
      [ago(20), "failed/failed"],
    ]);
    const failed = unit({ activeState: "failed", subState: "failed", stateChangeUsec: usec(ago(7)) });
    expect(buildContext(facts(), failed).stateEnteredMs).toBe(ago(7));
    expect(buildContext(facts({ recentTransitions: recent }), { ...failed, stateChangeUsec: 0 }).stateEnteredMs).toBe(ago(20));
    expect(buildContext(facts(), { ...failed, stateChangeUsec: 0 }).stateEnteredMs).toBeNull();
  });

  it("the failure point is the last real failure in the transitions", () => {
    const recent = transitions("inactive/dead", [
      [ago(30), "activating/start-pre"],
      [ago(20), "failed/failed", { result: "exit-code" }],
    ]);
    const f = facts({ recentTransitions: recent });
    expect(buildContext(f, f.unit!).failurePoint).toMatchObject({ phase: { activeState: "activating", subState: "start-pre" }, failed: recent[1] });
    expect(buildContext(facts(), unit()).failurePoint).toBeNull();
  });
});

describe("perCall", () => {
  it("derives once per context, on first use, and again for another context", () => {
    let runs = 0;
    const derived = perCall((ctx) => ({ runs: ++runs, name: ctx.name }));
    const f = facts();
    const a = buildContext(f, f.unit!);
    const b = buildContext(f, f.unit!);
    expect(runs).toBe(0);
    expect(derived(a)).toBe(derived(a));
    expect(runs).toBe(1);
    expect(derived(b)).not.toBe(derived(a));
    expect(runs).toBe(2);
  });

  it("caches falsy results too", () => {
    let runs = 0;
    const derived = perCall(() => (++runs, null));
    const f = facts();
    const ctx = buildContext(f, f.unit!);
    derived(ctx);
    derived(ctx);
    expect(runs).toBe(1);
  });

  it("the last failure is one object shared by every case of a call", () => {
    const f = facts({ unit: unit({ activeState: "failed", subState: "failed", result: "exit-code" }) });
    const ctx = buildContext(f, f.unit!);
    expect(lastFailure(ctx)).toBe(lastFailure(ctx));
  });
});
