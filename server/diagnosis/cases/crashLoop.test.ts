/** Case 6 (cases/crashLoop.ts, and the flapping case of cases/active.ts), through diagnose(). */
import { describe, expect, it } from "vitest";
import type { UnitDetail } from "../../contract/types";
import { diagnose } from "../diagnose";
import { ago, evidence, facts, line, proc, systemdLine, transitions, UNIT, unit, usec, values, VLLM_ARGV } from "../fixtures";

describe("case 6 — crash loop, then start limit", () => {
  /**
   * `count` Restart=on-failure cycles starting `startAgoS` ago: active/running for upS, then
   * failed/failed → activating/auto-restart, RestartSec=restartS later inactive/dead → active.
   * The last cycle ends in activating/auto-restart.
   */
  function cycles(count: number, startAgoS: number, upS = 3, restartS = 5) {
    const steps: Parameters<typeof transitions>[1] = [];
    let at = ago(startAgoS);
    let lastActiveMs = at;
    let lastFailMs = at;
    for (let i = 0; i < count; i++) {
      lastActiveMs = at;
      steps.push([at, "active/running", { mainPid: 4300 + i, nRestarts: i }]);
      at += upS * 1000;
      lastFailMs = at;
      steps.push([at, "failed/failed", { result: "exit-code", inRestartCycle: true, nRestarts: i }]);
      steps.push([at + 1, "activating/auto-restart", { result: "exit-code", inRestartCycle: true, nRestarts: i }]);
      if (i < count - 1) {
        at += restartS * 1000;
        steps.push([at - 1, "inactive/dead", { inRestartCycle: true, nRestarts: i + 1 }]);
      }
    }
    return { recent: transitions("inactive/dead", steps), lastActiveMs, lastFailMs, autoRestartMs: lastFailMs + 1 };
  }
  const crashJournal = (failMs: number) => [
    line(failMs - 500, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", { priority: 3 }),
    systemdLine(failMs, "Main process exited, code=exited, status=1/FAILURE"),
    systemdLine(failMs, "Failed with result 'exit-code'."),
  ];
  const looping = (c: ReturnType<typeof cycles>, overrides: Partial<UnitDetail> = {}) =>
    unit({
      activeState: "activating",
      subState: "auto-restart",
      result: "exit-code",
      restart: "on-failure",
      restartUsec: 5_000_000,
      nRestarts: 3,
      mainPid: 0,
      mainProcess: null,
      processes: [],
      execMainCode: 1,
      execMainStatus: 1,
      execMainStartUsec: usec(c.lastActiveMs),
      execMainExitUsec: usec(c.lastFailMs),
      stateChangeUsec: usec(c.autoRestartMs),
      timestamps: {
        inactiveExitUsec: usec(c.lastActiveMs),
        activeEnterUsec: usec(c.lastActiveMs),
        activeExitUsec: usec(c.lastFailMs),
        inactiveEnterUsec: usec(c.lastFailMs),
      },
      ...overrides,
    });

  it("in activating/auto-restart: counts restarts, gives the last failure and the next restart", () => {
    const c = cycles(4, 29); // last failure 2 s ago
    const d = diagnose(facts({ unit: looping(c, { nRestarts: 3 }), recentTransitions: c.recent, journal: crashJournal(c.lastFailMs) }));
    expect(d.code).toBe("crash-loop");
    expect(d.severity).toBe("critical");
    expect(d.headline).toBe(
      "Crash loop: the main process exited with code 1 (generic failure) 3 s after the unit became active; restarted 4 times in 26 s, next restart in 3 s.",
    );
    expect(d.etaMs).toBeCloseTo(3_000, -1);
    expect(d.nextStep?.action).toEqual({ kind: "stop", unit: UNIT });
    expect(evidence(d, "Restart")?.value).toBe("on-failure, RestartSec=5 s");
    expect(evidence(d, "Start limit")?.value).toBe("5 starts per 10 s");
    expect(evidence(d, "NRestarts")?.value).toBe("3");
    expect(values(d)).toContain("CUDA out of memory");
  });

  it("a transient failed/failed inside a Restart= cycle is not called final", () => {
    const c = cycles(3, 20);
    const recent = c.recent.slice(0, -1); // ends on failed/failed (inRestartCycle)
    const d = diagnose(
      facts({ unit: looping(c, { activeState: "failed", subState: "failed", stateChangeUsec: usec(c.lastFailMs) }), recentTransitions: recent }),
    );
    expect(d.code).toBe("crash-loop");
    expect(d.headline).toMatch(/^Crash loop: the main process exited with code 1 .*; restarted 3 times in \d+ s, restarting now\.$/);
  });

  it("first automatic restart only: a warning, not yet a loop", () => {
    const c = cycles(1, 5);
    const d = diagnose(facts({ unit: looping(c, { nRestarts: 0 }), recentTransitions: c.recent, journal: crashJournal(c.lastFailMs) }));
    expect(d.code).toBe("auto-restart-pending");
    expect(d.severity).toBe("warning");
    expect(d.headline).toBe(
      "The main process exited with code 1 (generic failure) 3 s after the unit became active; systemd restarts it — next restart in 3 s (Restart=on-failure).",
    );
  });

  it("Result=start-limit-hit: suggests reset-failed", () => {
    const c = cycles(5, 41);
    const recent = [...c.recent, ...transitions("activating/auto-restart", [[ago(1), "failed/failed", { result: "start-limit-hit" }]])];
    const u = looping(c, { activeState: "failed", subState: "failed", result: "start-limit-hit", nRestarts: 5, stateChangeUsec: usec(ago(1)) });
    const journal = [...crashJournal(c.lastFailMs), systemdLine(ago(1), "vllm-kimi-k25.service: Start request repeated too quickly.")];
    const d = diagnose(facts({ unit: u, recentTransitions: recent, journal }));
    expect(d.code).toBe("start-limit-hit");
    expect(d.severity).toBe("critical");
    expect(d.headline).toBe(
      "Start limit hit: systemd gave up after it restarted 5 times in 38 s (StartLimitBurst=5 per 10 s); " +
        "the last attempt failed because the main process exited with code 1 (generic failure) 3 s after the unit became active.",
    );
    expect(d.nextStep?.action).toEqual({ kind: "reset-failed", unit: UNIT });
    expect(values(d)).toContain("Start request repeated too quickly");
  });

  it("failed after the burst with Result=exit-code and NRestarts=3 (as seen on systemd 252)", () => {
    const c = cycles(3, 20);
    // the last cycle's failure is final: no auto-restart follows it
    const recent = c.recent.slice(0, -2).concat(transitions("active/running", [[c.lastFailMs, "failed/failed", { result: "exit-code", nRestarts: 3 }]]));
    const u = looping(c, { activeState: "failed", subState: "failed", nRestarts: 3, startLimitBurst: 3, stateChangeUsec: usec(c.lastFailMs) });
    const d = diagnose(facts({ unit: u, recentTransitions: recent }));
    expect(d.code).toBe("start-limit-hit");
    expect(d.nextStep?.action?.kind).toBe("reset-failed");
  });

  it("a final failure without Restart= is an ordinary failure, not a start limit", () => {
    const recent = transitions("inactive/dead", [
      [ago(10), "active/running", { mainPid: 4300 }],
      [ago(7), "failed/failed", { result: "exit-code" }],
    ]);
    const u = unit({
      activeState: "failed",
      subState: "failed",
      result: "exit-code",
      restart: "no",
      mainPid: 0,
      mainProcess: null,
      execMainCode: 1,
      execMainStatus: 1,
      execMainExitUsec: usec(ago(7)),
      stateChangeUsec: usec(ago(7)),
    });
    expect(diagnose(facts({ unit: u, recentTransitions: recent })).code).toBe("exited-after-start");
  });

  it("running again but restarted several times recently: flags flapping", () => {
    const c = cycles(3, 30);
    const recent = [
      ...c.recent,
      ...transitions("activating/auto-restart", [
        [ago(4) - 1, "inactive/dead"],
        [ago(4), "active/running", { mainPid: 4400 }],
      ]),
    ];
    const u = looping(c, {
      activeState: "active",
      subState: "running",
      mainPid: 4400,
      mainProcess: proc(4400, VLLM_ARGV),
      stateChangeUsec: usec(ago(4)),
      timestamps: { inactiveExitUsec: usec(ago(4)), activeEnterUsec: usec(ago(4)), activeExitUsec: usec(c.lastFailMs), inactiveEnterUsec: usec(ago(4)) },
    });
    const d = diagnose(facts({ unit: u, recentTransitions: recent }));
    expect(d.code).toBe("crash-loop");
    expect(d.severity).toBe("warning");
    expect(d.headline).toMatch(
      /^Running for 4 s, but it restarted 3 times in 27 s \(last failure: the main process exited with code 1 .*\); it may be crash-looping\.$/,
    );
  });
});

// ---------------------------------------------------------------------------------------
