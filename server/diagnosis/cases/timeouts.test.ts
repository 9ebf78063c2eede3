/** Case 5 (cases/timeouts.ts), through diagnose(). */
import { describe, expect, it } from "vitest";
import type { UnitDetail } from "../../contract/types";
import { diagnose } from "../diagnose";
import { ago, facts, GIB, holder, steadyFacts, steadyGpus, systemdLine, transitions, unit, usec } from "../fixtures";

describe("case 5 — Result=timeout, and in which phase", () => {
  const timedOut = (overrides: Partial<UnitDetail> = {}) =>
    unit({
      activeState: "failed",
      subState: "failed",
      result: "timeout",
      mainPid: 0,
      mainProcess: null,
      processes: [],
      timeoutStartUsec: 30_000_000,
      stateChangeUsec: usec(ago(10)),
      ...overrides,
    });

  it("start timed out in ExecStartPre (start-pre → stop-sigterm → failed)", () => {
    const recent = transitions("inactive/dead", [
      [ago(40), "activating/start-pre", { controlPid: 5210 }],
      [ago(10), "deactivating/stop-sigterm", { result: "timeout" }],
      [ago(10) + 5, "failed/failed", { result: "timeout" }],
    ]);
    const d = diagnose(
      facts({
        unit: timedOut(),
        recentTransitions: recent,
        journal: [systemdLine(ago(10), "vllm-kimi-k25.service: start-pre operation timed out. Terminating.")],
      }),
    );
    expect(d.code).toBe("start-timeout");
    expect(d.severity).toBe("critical");
    expect(d.headline).toMatch(
      /^Start timed out 10 s ago: ExecStartPre `\/bin\/bash -c .*` was still running when TimeoutStartSec=30 s ran out, so systemd stopped it\.$/,
    );
    expect(d.nextStep?.text).toMatch(/TimeoutStartSec/);
  });

  it("adds the GPU memory the ExecStartPre was waiting for when it is still held", () => {
    const recent = transitions("inactive/dead", [
      [ago(40), "activating/start-pre"],
      [ago(10), "deactivating/stop-sigterm", { result: "timeout" }],
      [ago(10), "failed/failed", { result: "timeout" }],
    ]);
    const f = steadyFacts(timedOut(), () => steadyGpus(() => [holder("exited", 4121, 50 * GIB, { exitedAtMs: ago(120) })]), { recentTransitions: recent });
    const d = diagnose(f);
    expect(d.code).toBe("start-timeout");
    expect(d.headline).toContain("it polls nvidia-smi, and 400 GiB of GPU memory is still held on GPUs 0–7 (by exited process 4121 of vllm-kimi-k25.service)");
  });

  it("start timed out waiting for readiness (activating/start)", () => {
    const recent = transitions("inactive/dead", [
      [ago(40), "activating/start-pre"],
      [ago(38), "activating/start", { mainPid: 4200 }],
      [ago(8), "deactivating/stop-sigterm", { result: "timeout" }],
      [ago(8), "failed/failed", { result: "timeout" }],
    ]);
    const d = diagnose(facts({ unit: timedOut({ stateChangeUsec: usec(ago(8)) }), recentTransitions: recent }));
    expect(d.code).toBe("start-timeout");
    expect(d.headline).toMatch(/^Start timed out 8 s ago: ExecStart `\/opt\/vllm\/bin\/vllm serve .*` was still running when TimeoutStartSec=30 s ran out/);
  });

  it("stop timed out (active → stop-sigterm → final-sigkill → failed)", () => {
    const recent = transitions("inactive/dead", [
      [ago(3600), "active/running", { mainPid: 4121 }],
      [ago(100), "deactivating/stop-sigterm"],
      [ago(10), "deactivating/final-sigkill", { result: "timeout" }],
      [ago(9), "failed/failed", { result: "timeout" }],
    ]);
    const d = diagnose(facts({ unit: timedOut({ stateChangeUsec: usec(ago(9)) }), recentTransitions: recent }));
    expect(d.code).toBe("stop-timeout");
    expect(d.headline).toBe(
      "Stop timed out 9 s ago: stopping took longer than TimeoutStopSec=1 min 30 s (went through stop-sigterm → final-sigkill), so systemd killed it and marked it failed.",
    );
  });
});

// ---------------------------------------------------------------------------------------
