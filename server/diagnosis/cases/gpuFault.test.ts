import { describe, expect, it } from "vitest";
import type { CrashLoopMarker, GpuFault } from "../../contract/faults";
import { diagnose } from "../diagnose";
import { NOW, UNIT, ago, facts, gpuUuid, transitions, unit, usec } from "../fixtures";

function xid(code: number, atMs: number, over: Partial<GpuFault> = {}): GpuFault {
  const fatal = [48, 61, 62, 64, 74, 79, 95, 119, 120].includes(code);
  return {
    id: `b-x${code}`,
    kind: "xid",
    code,
    atMs,
    pci: "0000:3b:00",
    gpuUuid: gpuUuid(3),
    gpuIndex: 3,
    pid: 4121,
    processName: "python3",
    unit: UNIT,
    text: code === 79 ? "GPU has fallen off the bus." : "Graphics Exception",
    title: code === 79 ? "GPU has fallen off the bus" : "GPU memory page fault",
    meaning: "…",
    advice: fatal ? "Restart will not help; the host needs a reset; check power." : "Check the service's log; restarting it is fine.",
    resetRequired: fatal,
    severity: fatal ? "critical" : "warning",
    ...over,
  };
}

const failed = () =>
  unit({
    activeState: "failed",
    subState: "failed",
    result: "signal",
    mainPid: 0,
    mainProcess: null,
    processes: [],
    stateChangeUsec: usec(ago(50)),
    timestamps: { inactiveExitUsec: usec(ago(600)), activeEnterUsec: usec(ago(590)), activeExitUsec: usec(ago(50)), inactiveEnterUsec: usec(ago(50)) },
  });

describe("GPU faults in the diagnosis", () => {
  it("Xid 79 on the unit's GPU: restart will not help, whatever the state says", () => {
    const d = diagnose(facts({ faults: [xid(79, NOW - 48_000)] }));
    expect(d).toMatchObject({ code: "gpu-xid", severity: "critical" });
    expect(d.headline).toBe("Xid 79: GPU has fallen off the bus at 03:11 UTC on GPU 3 — restart will not help; the host needs a reset.");
    expect(d.evidence.map((e) => e.label)).toEqual(["State", "Xid 79", "Meaning", "Process"]);
    expect(d.nextStep?.action).toBeUndefined();
  });

  it("a fault from before the unit's current run does not count", () => {
    expect(diagnose(facts({ faults: [xid(79, ago(4 * 3600))] })).code).toBe("healthy");
  });

  it("a non-fatal Xid from the unit's process explains its final failure, with the code's advice", () => {
    const d = diagnose(facts({ unit: failed(), faults: [xid(31, ago(51))] }));
    expect(d.code).toBe("gpu-xid");
    expect(d.severity).toBe("warning");
    expect(d.headline).toBe("Xid 31: GPU memory page fault at 03:11 UTC on GPU 3 — check the service's log; restarting it is fine.");
    // the same Xid while the unit runs is not the answer
    expect(diagnose(facts({ faults: [xid(31, ago(51))] })).code).toBe("healthy");
    // nor one of another unit's process on a shared GPU
    expect(diagnose(facts({ unit: failed(), faults: [xid(31, ago(51), { unit: "other.service" })] })).code).not.toBe("gpu-xid");
  });
});

describe("a crash loop the start limit can never end", () => {
  const marker: CrashLoopMarker = {
    restarts: 7,
    windowMs: 600_000,
    rule: "5/10m",
    firstAtUsec: usec(ago(420)),
    lastAtUsec: usec(ago(5)),
    startLimitStops: false,
  };
  const looping = () =>
    facts({
      unit: unit({
        activeState: "activating",
        subState: "auto-restart",
        restart: "always",
        restartUsec: 5_000_000,
        nRestarts: 7,
        stateChangeUsec: usec(ago(2)),
      }),
      recentTransitions: transitions("active/running", [
        [ago(3), "failed/failed", { result: "exit-code", inRestartCycle: true }],
        [ago(2), "activating/auto-restart", { result: "exit-code", inRestartCycle: true }],
      ]),
      crashLoop: marker,
    });

  it("says so, why, and offers stop-the-loop", () => {
    const d = diagnose(looping());
    expect(d).toMatchObject({ code: "crash-loop-endless", severity: "critical", nextStep: { action: { kind: "stop-loop", unit: UNIT } } });
    expect(d.headline).toMatch(
      /^Crash loop systemd will never stop: 7 restarts in 7 min \(rule 5\/10m\), last failure: .*; Restart=always and RestartSec=5 s × StartLimitBurst=5 is not shorter than StartLimitIntervalSec=10 s, so the start limit can never trip\.$/,
    );
  });

  it("a loop the start limit will end stays the restart-cycle case's", () => {
    expect(diagnose({ ...looping(), crashLoop: { ...marker, startLimitStops: true } }).code).toBe("crash-loop");
    expect(diagnose({ ...looping(), crashLoop: null }).code).toBe("crash-loop");
  });
});
