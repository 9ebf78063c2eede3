/** Case 9 (cases/stopping.ts), through diagnose(). */
import { describe, expect, it } from "vitest";
import type { UnitDetail } from "../../contract/types";
import { diagnose } from "../diagnose";
import { ago, facts, proc, transitions, UINT64_MAX, unit, usec, VLLM_ARGV, WAIT_GPU_ARGV } from "../fixtures";

describe("case 9 — stop stuck in stop-sigterm", () => {
  const stopping = (secondsAgo: number, overrides: Partial<UnitDetail> = {}) =>
    unit({ activeState: "deactivating", subState: "stop-sigterm", stateChangeUsec: usec(ago(secondsAgo)), ...overrides });

  it("ignoring SIGTERM for 45 s: how long, and time until SIGKILL", () => {
    const d = diagnose(facts({ unit: stopping(45) }));
    expect(d.code).toBe("stop-stuck");
    expect(d.severity).toBe("warning");
    expect(d.headline).toBe("Stop stuck: PID 4121 (vllm) has ignored SIGTERM for 45 s; systemd sends SIGKILL in 45 s.");
    expect(d.etaMs).toBe(45_000);
    expect(d.nextStep?.text).toContain("systemctl kill -s SIGKILL vllm-kimi-k25.service");
  });

  it("a fresh stop is just 'stopping'", () => {
    const d = diagnose(facts({ unit: stopping(1) }));
    expect(d.code).toBe("stopping");
    expect(d.severity).toBe("info");
    expect(d.headline).toBe("Stopping: SIGTERM sent 1 s ago, waiting for PID 4121 (vllm) to exit; systemd sends SIGKILL in 1 min 29 s.");
  });

  it("TimeoutStopSec=infinity: no SIGKILL will come", () => {
    const d = diagnose(facts({ unit: stopping(300, { timeoutStopUsec: UINT64_MAX }) }));
    expect(d.severity).toBe("critical");
    expect(d.headline).toContain("no SIGKILL will follow (TimeoutStopSec=infinity)");
    expect(d.etaMs).toBeUndefined();
  });

  it("process in D state", () => {
    const d = diagnose(facts({ unit: stopping(30, { mainProcess: proc(4121, VLLM_ARGV, { state: "uninterruptible" }) }) }));
    expect(d.severity).toBe("critical");
    expect(d.headline).toContain("D state");
  });

  it("SIGKILL sent and the process is still there", () => {
    const d = diagnose(facts({ unit: stopping(12, { subState: "stop-sigkill" }) }));
    expect(d.code).toBe("stop-stuck");
    expect(d.severity).toBe("critical");
    expect(d.headline).toMatch(/^Stop stuck: SIGKILL sent 12 s ago but PID 4121 \(vllm\) is still there/);
  });

  it("tearing down after a start timeout says why", () => {
    const recent = transitions("inactive/dead", [
      [ago(40), "activating/start-pre"],
      [ago(10), "deactivating/stop-sigterm", { result: "timeout" }],
    ]);
    const u = stopping(10, { result: "timeout", mainPid: 0, mainProcess: null, processes: [proc(5210, WAIT_GPU_ARGV, { state: "sleeping" })] });
    const d = diagnose(facts({ unit: u, recentTransitions: recent }));
    expect(d.headline).toMatch(
      /^Start timed out in ExecStartPre; Stop stuck: PID 5210 \(bash\) has ignored SIGTERM for 10 s; systemd sends SIGKILL in 1 min 20 s\.$/,
    );
  });

  it("ExecStop running", () => {
    const stopArgv = ["/usr/local/bin/drain-requests"];
    const d = diagnose(facts({ unit: stopping(2, { subState: "stop", controlPid: 6001, controlProcess: proc(6001, stopArgv) }) }));
    expect(d.code).toBe("stopping");
    expect(d.headline).toBe("Stopping: ExecStop running for 2 s: `/usr/local/bin/drain-requests`; systemd moves on (SIGTERM) in 1 min 28 s.");
  });
});

// ---------------------------------------------------------------------------------------
