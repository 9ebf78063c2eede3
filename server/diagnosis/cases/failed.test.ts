/** Cases 4 and 7 (cases/failed.ts), through diagnose(). */
import { describe, expect, it } from "vitest";
import type { UnitDetail } from "../../contract/types";
import { diagnose } from "../diagnose";
import { ago, cmd, evidence, facts, line, systemdLine, transitions, UNIT, unit, usec, values, VLLM_ARGV, WAIT_GPU_ARGV } from "../fixtures";

describe("case 4 — ExecStartPre or ExecStart exited non-zero", () => {
  const failedUnit = (overrides: Partial<UnitDetail> = {}) =>
    unit({
      activeState: "failed",
      subState: "failed",
      result: "exit-code",
      mainPid: 0,
      stateChangeUsec: usec(ago(60)),
      mainProcess: null,
      processes: [],
      execStartPre: [cmd("/usr/local/bin/check-model", "/models/kimi-k2.5")],
      ...overrides,
    });
  const preFailTransitions = () =>
    transitions("inactive/dead", [
      [ago(65), "activating/start-pre", { controlPid: 5300 }],
      [ago(60), "failed/failed", { result: "exit-code" }],
    ]);
  const preFailJournal = () => [
    systemdLine(ago(65), "Starting vllm-kimi-k25.service - vLLM Kimi K2.5..."),
    line(ago(64), "checking /models/kimi-k2.5"),
    line(ago(61), "ERROR: /models/kimi-k2.5/config.json: No such file or directory", { priority: 3 }),
    systemdLine(ago(60), "vllm-kimi-k25.service: Control process exited, code=exited, status=1/FAILURE"),
    systemdLine(ago(60), "vllm-kimi-k25.service: Failed with result 'exit-code'."),
    systemdLine(ago(60), "Failed to start vllm-kimi-k25.service - vLLM Kimi K2.5."),
  ];

  it("ExecStartPre: which command, exit code from the journal, last output lines", () => {
    const d = diagnose(facts({ unit: failedUnit(), recentTransitions: preFailTransitions(), journal: preFailJournal() }));
    expect(d.code).toBe("start-pre-failed");
    expect(d.severity).toBe("critical");
    expect(d.headline).toBe("Failed 1 min ago: ExecStartPre `/usr/local/bin/check-model /models/kimi-k2.5` exited with code 1 (generic failure).");
    expect(values(d)).toContain("ERROR: /models/kimi-k2.5/config.json: No such file or directory");
    expect(values(d)).toContain("Control process exited, code=exited, status=1/FAILURE");
    // systemd's own chatter is not shown as the service's output
    expect(values(d)).not.toContain("Failed to start vllm-kimi-k25.service");
    expect(d.nextStep?.action).toEqual({ kind: "restart", unit: UNIT });
  });

  it("several ExecStartPre lines: says one of them and lists them", () => {
    const u = failedUnit({ execStartPre: [cmd("/usr/local/bin/check-model"), cmd(...WAIT_GPU_ARGV)] });
    const d = diagnose(facts({ unit: u, recentTransitions: preFailTransitions(), journal: preFailJournal() }));
    expect(d.headline).toBe("Failed 1 min ago: one of the 2 ExecStartPre commands exited with code 1 (generic failure).");
    expect(evidence(d, "ExecStartPre #2")?.value).toMatch(/nvidia-smi/);
  });

  it("exit status 203 (binary missing) gets a hint and a matching next step", () => {
    const journal = [systemdLine(ago(60), "vllm-kimi-k25.service: Control process exited, code=exited, status=203/EXEC")];
    const d = diagnose(facts({ unit: failedUnit(), recentTransitions: preFailTransitions(), journal }));
    expect(d.headline).toContain("exited with code 203 (EXEC: binary missing or not executable)");
    expect(d.nextStep?.text).toMatch(/exists and is executable/);
  });

  it("exit code unknown (journal empty): still names the phase and the result", () => {
    const d = diagnose(facts({ unit: failedUnit(), recentTransitions: preFailTransitions() }));
    expect(d.headline).toBe("Failed 1 min ago: ExecStartPre `/usr/local/bin/check-model /models/kimi-k2.5` failed (Result=exit-code).");
  });

  it("ExecStart of a Type=notify unit (activating/start → failed): exit code from ExecMainStatus", () => {
    const u = failedUnit({ execMainCode: 1, execMainStatus: 2, execMainStartUsec: usec(ago(70)), execMainExitUsec: usec(ago(60)) });
    const recent = transitions("inactive/dead", [
      [ago(75), "activating/start-pre"],
      [ago(70), "activating/start", { mainPid: 4200 }],
      [ago(60), "failed/failed", { result: "exit-code" }],
    ]);
    const journal = [
      line(ago(61), "vllm: error: unrecognized arguments: --tensor-parallel 8"),
      systemdLine(ago(60), "Main process exited, code=exited, status=2/INVALIDARGUMENT"),
    ];
    const d = diagnose(facts({ unit: u, recentTransitions: recent, journal }));
    expect(d.code).toBe("start-failed");
    expect(d.headline).toBe(
      `Failed 1 min ago: ExecStart \`${VLLM_ARGV.join(" ")}\` exited with code 2 (invalid argument / misuse) before the service reported ready.`,
    );
    expect(evidence(d, "Main process")?.value).toMatch(/ExecMainCode=1, ExecMainStatus=2/);
    expect(values(d)).toContain("unrecognized arguments");
  });

  it("no transitions recorded: the phase comes from the unit's timestamps", () => {
    // main never started in this attempt (ExecMainStart older than InactiveExit) → ExecStartPre
    const u = failedUnit({
      execMainStartUsec: usec(ago(7200)),
      timestamps: { inactiveExitUsec: usec(ago(65)), activeEnterUsec: usec(ago(7200)), activeExitUsec: usec(ago(600)), inactiveEnterUsec: usec(ago(60)) },
    });
    const d = diagnose(facts({ unit: u, journal: preFailJournal() }));
    expect(d.code).toBe("start-pre-failed");
    expect(d.headline).toContain("exited with code 1");
  });
});

// ---------------------------------------------------------------------------------------
describe("case 7 — main process exited soon after becoming active", () => {
  const died = (code: number, status: number, ranS: number, overrides: Partial<UnitDetail> = {}) => {
    const activeAt = ago(20 + ranS);
    return {
      unit: unit({
        activeState: "failed",
        subState: "failed",
        result: code === 1 ? "exit-code" : code === 2 ? "signal" : "core-dump",
        mainPid: 0,
        mainProcess: null,
        processes: [],
        execStartPre: [],
        execMainCode: code,
        execMainStatus: status,
        execMainStartUsec: usec(activeAt),
        execMainExitUsec: usec(ago(20)),
        stateChangeUsec: usec(ago(20)),
        timestamps: { inactiveExitUsec: usec(activeAt), activeEnterUsec: usec(activeAt), activeExitUsec: usec(ago(20)), inactiveEnterUsec: usec(ago(20)) },
        ...overrides,
      }),
      recentTransitions: transitions("inactive/dead", [
        [activeAt, "active/running", { mainPid: 4500 }],
        [ago(20), "failed/failed", { result: code === 1 ? "exit-code" : "signal" }],
      ]),
    };
  };

  it("killed by a signal: names the signal and how long it ran", () => {
    const d = diagnose(facts({ ...died(2, 9, 3), journal: [line(ago(21), "INFO Loading safetensors checkpoint shards: 12% Completed")] }));
    expect(d.code).toBe("exited-after-start");
    expect(d.severity).toBe("critical");
    expect(d.headline).toBe("Failed 20 s ago: the main process was killed by SIGKILL 3 s after the unit became active.");
    expect(values(d)).toContain("Loading safetensors checkpoint shards");
    expect(evidence(d, "ExecStart")?.value).toContain("/opt/vllm/bin/vllm serve");
  });

  it("exit code", () => {
    const d = diagnose(facts(died(1, 1, 2)));
    expect(d.headline).toBe("Failed 20 s ago: the main process exited with code 1 (generic failure) 2 s after the unit became active.");
  });

  it("core dump", () => {
    const d = diagnose(facts(died(3, 11, 1)));
    expect(d.headline).toContain("dumped core (SIGSEGV) 1 s after the unit became active");
  });

  it("exit code from the journal when ExecMain* is not filled in", () => {
    const f = died(0, 0, 5, { execMainExitUsec: 0 });
    const d = diagnose(facts({ ...f, journal: [systemdLine(ago(20), "vllm-kimi-k25.service: Main process exited, code=killed, status=6/ABRT")] }));
    expect(d.headline).toContain("the main process was killed by SIGABRT 5 s after the unit became active");
  });

  it("a main process that ran for hours is 'main-exited', not 'soon after start'", () => {
    const d = diagnose(facts(died(1, 1, 5 * 3600)));
    expect(d.code).toBe("main-exited");
    expect(d.headline).toContain("5 h after the unit became active");
  });

  it("OOM killer (host RAM)", () => {
    const f = died(2, 9, 30, { result: "oom-kill" });
    f.recentTransitions[f.recentTransitions.length - 1].result = "oom-kill";
    const d = diagnose(facts(f));
    expect(d.code).toBe("oom-killed");
    expect(d.headline).toContain("OOM killer");
  });
});

// ---------------------------------------------------------------------------------------
