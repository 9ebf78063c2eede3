/** Quiet states (cases/quietStates.ts), through diagnose(). */
import { describe, expect, it } from "vitest";
import { diagnose } from "../diagnose";
import { ago, evidence, facts, UNIT, unit, usec } from "../fixtures";

describe("quiet states", () => {
  it("inactive/dead: stopped since …, nothing wrong, offers start", () => {
    const u = unit({
      activeState: "inactive",
      subState: "dead",
      mainPid: 0,
      mainProcess: null,
      processes: [],
      stateChangeUsec: usec(ago(7200)),
      execMainCode: 1,
      execMainStatus: 0,
      execMainExitUsec: usec(ago(7200)),
      timestamps: { inactiveExitUsec: usec(ago(9000)), activeEnterUsec: usec(ago(8990)), activeExitUsec: usec(ago(7200)), inactiveEnterUsec: usec(ago(7200)) },
    });
    const d = diagnose(facts({ unit: u }));
    expect(d.code).toBe("stopped");
    expect(d.severity).toBe("info");
    expect(d.headline).toBe("Stopped 2 h ago (since 2025-05-01 01:12:00 UTC); nothing is wrong, it is just not running.");
    expect(d.nextStep?.action).toEqual({ kind: "start", unit: UNIT });
    expect(evidence(d, "Last exit")?.value).toMatch(/exited with code 0/);
  });

  it("never started", () => {
    const u = unit({
      activeState: "inactive",
      subState: "dead",
      stateChangeUsec: 0,
      execMainStartUsec: 0,
      timestamps: { inactiveExitUsec: 0, activeEnterUsec: 0, activeExitUsec: 0, inactiveEnterUsec: 0 },
    });
    expect(diagnose(facts({ unit: u })).headline).toBe("Not running and not started since systemd loaded it; nothing is wrong.");
  });

  it("start job queued behind ordering dependencies", () => {
    const u = unit({ activeState: "inactive", subState: "dead", job: { id: 77, type: "start" } });
    const d = diagnose(facts({ unit: u, job: { id: 77, type: "start" } }));
    expect(d.code).toBe("start-queued");
    expect(d.headline).toContain("start job (#77) is queued");
  });

  it("reloading", () => {
    expect(diagnose(facts({ unit: unit({ activeState: "reloading", subState: "reload", stateChangeUsec: usec(ago(3)) }) })).code).toBe("reloading");
  });

  it("unknown state pair", () => {
    const d = diagnose(facts({ unit: unit({ activeState: "refreshing", subState: "weird", stateChangeUsec: usec(ago(3)) }) }));
    expect(d.code).toBe("unknown-state");
    expect(d.headline).toBe("State refreshing (weird) for 3 s: gpudeck has no diagnosis for this state.");
  });
});
