import { describe, expect, it } from "vitest";
import type { UnitDetail } from "../contract/types";
import type { CrashLoopMarker, GpuFault } from "../contract/faults";
import { action, execCondition, failedReadiness, finishedJob, readiness, servingReadiness } from "./readinessFixtures";
import { DIAGNOSIS_CODES, type DiagnosisCode } from "../contract/diagnosis";
import { buildContext } from "./context";
import { diagnose } from "./diagnose";
import { DIAGNOSIS_CASES, FALLBACK_CASE, firstAnswer } from "./registry";
import type { DiagnosisFacts } from "./types";
import {
  GIB,
  UNIT,
  ago,
  cmd,
  facts,
  holder,
  incidentFacts,
  proc,
  startPreUnit,
  steadyFacts,
  steadyGpus,
  systemdLine,
  transitions,
  unit,
  usec,
} from "./fixtures";

const ALL_CASES = [...DIAGNOSIS_CASES, FALLBACK_CASE];

/**
 * The case that answers, and its diagnosis, which is what diagnose() says (facts with a unit:
 * diagnose() answers a null one itself).
 */
function answer(f: DiagnosisFacts) {
  if (f.unit === null) throw new Error("answer() needs facts with a unit");
  const { from, diagnosis } = firstAnswer(buildContext(f, f.unit));
  expect(diagnose(f)).toEqual(diagnosis);
  return { caseId: from.id, claims: from.codes, code: diagnosis.code, diagnosis };
}

const inactive = (over: Partial<UnitDetail> = {}) => unit({ activeState: "inactive", subState: "dead", mainPid: 0, mainProcess: null, processes: [], ...over });
const failedUnit = (result: string, over: Partial<UnitDetail> = {}) =>
  unit({ activeState: "failed", subState: "failed", result, mainPid: 0, mainProcess: null, processes: [], stateChangeUsec: usec(ago(50)), ...over });
/** Failed 50 s ago after entering `phase` 60 s ago (or `startedS` ago). */
const failedIn = (phase: string, result: string, over: Partial<UnitDetail> = {}, startedS = 60) =>
  facts({
    unit: failedUnit(result, over),
    recentTransitions: transitions("inactive/dead", [
      [ago(startedS), phase],
      [ago(50), "failed/failed", { result }],
    ]),
  });
const dependencyLine = () => [systemdLine(ago(30), "Dependency failed for vllm-kimi-k25.service - vLLM Kimi K2.5.", { priority: 3, jobResult: "dependency" })];
/** This unit's exited processes still hold 100 GiB on GPUs 0–3. */
const exitedMemory = () => steadyGpus((i) => (i < 4 ? [holder("exited", 4121, 25 * GIB, { exitedAtMs: ago(40) })] : []));
/** An Xid on GPU 3 from the unit's process 10 s ago (79: the GPU fell off the bus). */
const xid = (code: number, resetRequired: boolean): GpuFault => ({
  id: "b-x1",
  kind: "xid",
  code,
  atMs: ago(10),
  pci: "0000:3b:00",
  gpuUuid: null,
  gpuIndex: null,
  pid: 4121,
  processName: "python3",
  unit: UNIT,
  text: "",
  title: `Xid ${code}`,
  meaning: "",
  advice: "Reset.",
  resetRequired,
  severity: resetRequired ? "critical" : "warning",
});
const endlessMarker: CrashLoopMarker = {
  restarts: 6,
  windowMs: 600_000,
  rule: "5/10m",
  firstAtUsec: usec(ago(300)),
  lastAtUsec: usec(ago(5)),
  startLimitStops: false,
};
const plainStartPre = (argv: string[]) => startPreUnit(5, { execStartPre: [cmd(...argv)], controlProcess: proc(5210, argv), processes: [proc(5210, argv)] });

/** One situation per code, and the case that answers it. */
const SCENARIOS: [DiagnosisCode, string, () => DiagnosisFacts][] = [
  ["healthy", "healthy", () => facts()],
  ["stopped", "stopped", () => facts({ unit: inactive() })],
  ["start-queued", "start-queued", () => facts({ unit: inactive({ job: { id: 7, type: "start" } }) })],
  ["reloading", "reloading", () => facts({ unit: unit({ activeState: "reloading", subState: "reload" }) })],
  ["maintenance", "maintenance", () => facts({ unit: unit({ activeState: "maintenance", subState: "cleaning" }) })],
  ["unknown-state", "unknown-state", () => facts({ unit: unit({ activeState: "refreshing", subState: "weird" }) })],
  ["unit-file-gone", "load-state", () => facts({ unit: unit({ loadState: "not-found" }) })],
  ["waiting-gpu-exited", "waiting-for-gpu", () => incidentFacts()],
  [
    "waiting-gpu-unit",
    "waiting-for-gpu",
    () => steadyFacts(startPreUnit(20), () => steadyGpus((i) => (i < 4 ? [holder("unit", 9100 + i, 70 * GIB, { unit: "llama-70b.service" })] : []))),
  ],
  [
    "waiting-gpu-leftover",
    "waiting-for-gpu",
    () => {
      const u = startPreUnit(30);
      u.processes = [...u.processes, proc(4130, ["python3", "-m", "vllm.worker"])];
      return steadyFacts(u, () => steadyGpus((i) => (i === 0 ? [holder("unit", 4130, 20 * GIB, { unit: UNIT })] : [])));
    },
  ],
  ["waiting-gpu-outside", "waiting-for-gpu", () => steadyFacts(startPreUnit(20), () => steadyGpus((i) => (i === 0 ? [holder("outside", 777, 40 * GIB)] : [])))],
  [
    "waiting-gpu-unattributed",
    "waiting-for-gpu",
    () =>
      steadyFacts(startPreUnit(30), () =>
        steadyGpus(
          () => [],
          (i) => (i === 1 ? { unattributedMiB: 12 * GIB, memoryUsedMiB: 12 * GIB } : {}),
        ),
      ),
  ],
  ["start-pre-running", "start-pre-running", () => facts({ unit: plainStartPre(["/bin/sleep", "30"]) })],
  ["start-running", "start-phase", () => facts({ unit: unit({ activeState: "activating", subState: "start" }) })],
  ["start-post-running", "start-phase", () => facts({ unit: unit({ activeState: "activating", subState: "start-post" }) })],
  [
    "auto-restart-pending",
    "restart-cycle",
    () => facts({ unit: unit({ activeState: "activating", subState: "auto-restart", restart: "on-failure", nRestarts: 1 }) }),
  ],
  ["crash-loop", "restart-cycle", () => facts({ unit: unit({ activeState: "activating", subState: "auto-restart", restart: "on-failure", nRestarts: 4 }) })],
  ["start-pre-failed", "failed", () => failedIn("activating/start-pre", "exit-code")],
  ["start-failed", "failed", () => failedIn("activating/start", "exit-code")],
  ["start-post-failed", "failed", () => failedIn("activating/start-post", "exit-code")],
  ["exited-after-start", "failed", () => failedIn("active/running", "exit-code")],
  ["main-exited", "failed", () => failedIn("active/running", "exit-code", {}, 3600)],
  ["oom-killed", "failed", () => failedIn("active/running", "oom-kill")],
  ["failed", "failed", () => facts({ unit: failedUnit("exit-code", { execStartPre: [], execMainStartUsec: 0 }) })],
  ["start-timeout", "timeout", () => failedIn("activating/start-pre", "timeout")],
  [
    "stop-timeout",
    "timeout",
    () =>
      facts({
        unit: failedUnit("timeout"),
        recentTransitions: transitions("inactive/dead", [
          [ago(3600), "active/running"],
          [ago(140), "deactivating/stop-sigterm"],
          [ago(50), "failed/failed", { result: "timeout" }],
        ]),
      }),
  ],
  ["start-limit-hit", "start-limit", () => facts({ unit: failedUnit("start-limit-hit") })],
  ["not-found", "load-state", () => facts({ unit: inactive({ loadState: "not-found" }) })],
  ["masked", "load-state", () => facts({ unit: inactive({ loadState: "masked" }) })],
  ["bad-setting", "load-state", () => facts({ unit: inactive({ loadState: "bad-setting" }) })],
  ["load-error", "load-state", () => facts({ unit: inactive({ loadState: "error" }) })],
  [
    "dependency-failed",
    "dependency-failed",
    () => facts({ unit: inactive({ timestamps: { ...unit().timestamps, inactiveExitUsec: 0 } }), journal: dependencyLine() }),
  ],
  ["stopping", "stopping", () => facts({ unit: unit({ activeState: "deactivating", subState: "stop-sigterm", stateChangeUsec: usec(ago(1)) }) })],
  ["stop-stuck", "stopping", () => facts({ unit: unit({ activeState: "deactivating", subState: "stop-sigterm", stateChangeUsec: usec(ago(45)) }) })],
  ["gpu-xid", "gpu-fault", () => facts({ faults: [xid(79, true)] })],
  [
    "crash-loop-endless",
    "endless-loop",
    () =>
      facts({
        unit: unit({ activeState: "activating", subState: "auto-restart", restart: "always", restartUsec: 5_000_000, nRestarts: 6 }),
        crashLoop: endlessMarker,
      }),
  ],
  ["engine-loading", "serving", () => facts({ readiness: readiness() })],
  ["engine-not-serving", "serving", () => facts({ readiness: servingReadiness({ state: "not-serving", sinceMs: ago(240), reason: "/health answered 503" }) })],
  ["engine-failed", "serving", () => facts({ readiness: failedReadiness() })],
  [
    "start-skipped",
    "start-request",
    () =>
      facts({
        unit: inactive({ result: "exec-condition", execCondition: [execCondition(1)] }),
        recentJobs: [finishedJob(30, "done")],
        recentActions: [action(30)],
      }),
  ],
  [
    "start-refused",
    "start-request",
    () =>
      facts({
        unit: inactive({ requires: ["nothere.service"] }),
        recentActions: [action(20, { jobId: null, error: "systemd refused start of vllm-kimi-k25.service: Unit nothere.service not found." })],
      }),
  ],
];

describe("the registry", () => {
  it("every stable code is claimed by a registered case, and every claim is a stable code", () => {
    const claimed = new Set(ALL_CASES.flatMap((c) => c.codes));
    expect([...claimed].sort()).toEqual([...DIAGNOSIS_CODES].sort());
  });

  it("case ids are unique", () => {
    const ids = ALL_CASES.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("has a scenario for every code", () => {
    expect(SCENARIOS.map(([code]) => code).sort()).toEqual([...DIAGNOSIS_CODES].sort());
  });

  it.each(SCENARIOS)("%s is answered by the %s case, which claims it", (code, caseId, build) => {
    const a = answer(build());
    expect({ code: a.code, caseId: a.caseId }).toEqual({ code, caseId });
    expect(a.claims).toContain(code);
  });

  it("a unit systemd does not know (no detail) is not-found without asking the cases", () => {
    expect(diagnose(facts({ unit: null, requestedName: "vllm-typo.service" })).code).toBe("not-found");
  });

  it("the fallback answers anything, even a state every case declines", () => {
    const f = facts({ unit: unit({ activeState: "activating", subState: "weird" }) });
    expect(DIAGNOSIS_CASES.map((c) => c.diagnose(buildContext(f, f.unit!)))).toEqual(DIAGNOSIS_CASES.map(() => null));
    expect(answer(f).code).toBe("unknown-state");
  });
});

describe("precedence (today's order, kept exactly)", () => {
  it("start limit hit with exited GPU memory still held: start-limit-hit, not a GPU wait", () => {
    const f = steadyFacts(failedUnit("start-limit-hit", { nRestarts: 5, restart: "always" }), exitedMemory);
    const a = answer(f);
    expect(a.code).toBe("start-limit-hit");
    expect(a.diagnosis.headline).not.toMatch(/GPU/);
    // The same memory, while the unit waits in ExecStartPre, is what it waits for.
    expect(answer(steadyFacts(startPreUnit(20), exitedMemory)).code).toBe("waiting-gpu-exited");
  });

  it("a load problem wins over a fatal Xid; a fatal Xid wins over an endless loop, which wins over the restart cycle", () => {
    const looping = unit({ activeState: "activating", subState: "auto-restart", restart: "always", restartUsec: 5_000_000, nRestarts: 6 });
    expect(answer(facts({ unit: inactive({ loadState: "masked" }), faults: [xid(79, true)] })).code).toBe("masked");
    expect(answer(facts({ unit: looping, faults: [xid(79, true)], crashLoop: endlessMarker })).code).toBe("gpu-xid");
    expect(answer(facts({ unit: looping, crashLoop: endlessMarker })).code).toBe("crash-loop-endless");
    expect(answer(facts({ unit: looping, faults: [xid(13, false)] })).code).toBe("crash-loop");
  });

  it("a load problem wins over the state: masked while failed at the start limit", () => {
    expect(answer(facts({ unit: failedUnit("start-limit-hit", { loadState: "masked" }) })).code).toBe("masked");
  });

  it("a running unit whose file is gone: unit-file-gone, even when it is flapping", () => {
    const recent = transitions("active/running", [
      [ago(60), "activating/auto-restart", { inRestartCycle: true }],
      [ago(40), "active/running"],
      [ago(30), "activating/auto-restart", { inRestartCycle: true }],
      [ago(10), "active/running"],
    ]);
    const running = unit({ timestamps: { ...unit().timestamps, activeEnterUsec: usec(ago(10)) } });
    expect(answer(facts({ unit: running, recentTransitions: recent })).code).toBe("crash-loop");
    expect(answer(facts({ unit: { ...running, loadState: "not-found" }, recentTransitions: recent })).code).toBe("unit-file-gone");
  });

  it("inside a Restart= cycle, a failed state is not final: the cycle wins over a dependency failure and the start limit", () => {
    const recent = transitions("active/running", [[ago(1), "failed/failed", { result: "exit-code", inRestartCycle: true }]]);
    const a = answer(facts({ unit: failedUnit("start-limit-hit", { nRestarts: 3, restart: "always" }), recentTransitions: recent, journal: dependencyLine() }));
    expect(a.caseId).toBe("restart-cycle");
  });

  it("a dependency failure wins over the start limit (failed) and over a queued job (inactive)", () => {
    const notStartedSince = { timestamps: { ...unit().timestamps, inactiveExitUsec: 0 } };
    expect(answer(facts({ unit: failedUnit("start-limit-hit", notStartedSince), journal: dependencyLine() })).code).toBe("dependency-failed");
    expect(answer(facts({ unit: inactive({ ...notStartedSince, job: { id: 9, type: "start" } }), journal: dependencyLine() })).code).toBe("dependency-failed");
  });

  it("the start limit wins over a timeout, and a timeout over the phase's failure code", () => {
    expect(answer(failedIn("activating/start-pre", "timeout", { nRestarts: 5 })).code).toBe("start-limit-hit");
    expect(answer(failedIn("activating/start-pre", "timeout")).code).toBe("start-timeout");
    expect(answer(failedIn("activating/start-pre", "exit-code")).code).toBe("start-pre-failed");
  });
});
