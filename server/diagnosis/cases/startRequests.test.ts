import { describe, expect, it } from "vitest";
import type { UnitDetail } from "../../contract/types";
import { diagnose } from "../diagnose";
import { ago, evidence, facts, line, systemdLine, transitions, unit, usec } from "../fixtures";
import { action, execCondition, finishedJob } from "../readinessFixtures";

const inactive = (over: Partial<UnitDetail> = {}) =>
  unit({
    activeState: "inactive",
    subState: "dead",
    mainPid: 0,
    mainProcess: null,
    processes: [],
    execMainStartUsec: 0,
    timestamps: { inactiveExitUsec: 0, activeEnterUsec: 0, activeExitUsec: 0, inactiveEnterUsec: 0 },
    ...over,
  });
const REFUSED = "systemd refused start of vllm-kimi-k25.service: Unit nothere.service not found.";

describe("start requests that did nothing", () => {
  it("ExecCondition exited 1: skipped, not failed; the command, its status and its own output", () => {
    const f = facts({
      unit: inactive({ result: "exec-condition", execCondition: [execCondition(1)] }),
      recentActions: [action(30)],
      recentJobs: [finishedJob(30, "done")],
      journal: [
        systemdLine(ago(30), "Starting vllm-kimi-k25.service - vLLM Kimi K2.5..."),
        line(ago(30), "no H200 on this host", { pid: 307 }),
        systemdLine(ago(30), "vllm-kimi-k25.service: Skipped due to 'exec-condition'."),
        systemdLine(ago(30), "Condition check resulted in vllm-kimi-k25.service - vLLM Kimi K2.5 being skipped.", { jobResult: "done" }),
      ],
    });
    const d = diagnose(f);
    expect(d).toMatchObject({ severity: "warning", code: "start-skipped", nextStep: { action: { kind: "start" } } });
    expect(d.headline).toBe(
      "The last start (job #23, by alice, 30 s ago) was skipped, not failed: ExecCondition `/bin/sh -c 'nvidia-smi -L | grep -q H200'` exited with status 1, so systemd did not run the service (Result=exec-condition).",
    );
    expect(d.evidence.map((e) => e.value)).toContain("no H200 on this host");
    expect(evidence(d, "ExecCondition")?.value).toMatch(/PID 307 exited with status 1/);
  });

  it("a skip systemd logged while nobody watched (at boot): from the journal alone", () => {
    const d = diagnose(
      facts({
        unit: inactive(),
        journal: [systemdLine(ago(600), "Condition check resulted in vllm-kimi-k25.service - vLLM Kimi K2.5 being skipped.", { jobResult: "done" })],
      }),
    );
    expect(d.code).toBe("start-skipped");
    expect(d.headline).toBe(
      "The last start (10 min ago) was skipped, not failed: a Condition…= setting of the unit was not met, so systemd did not run the service.",
    );
  });

  it("refused: a required unit that is not installed; no job ran", () => {
    const d = diagnose(
      facts({ unit: inactive({ requires: ["sysinit.target", "nothere.service"] }), recentActions: [action(20, { jobId: null, error: REFUSED })] }),
    );
    expect(d).toMatchObject({ severity: "critical", code: "start-refused" });
    expect(d.headline).toBe(
      "The last start (by alice, 20 s ago) was refused by systemd: nothere.service, which it requires (Requires=/BindsTo=), is not installed (`Unit nothere.service not found.`); no job ran.",
    );
    expect(d.nextStep?.text).toBe(
      "Install nothere.service, or remove it from Requires=/BindsTo= in /etc/systemd/system/vllm-kimi-k25.service and run `systemctl daemon-reload`; then start this one again.",
    );
    // a failed unit refused a new start: said, and that it is still failed from before
    const failed = unit({ activeState: "failed", subState: "failed", result: "exit-code", stateChangeUsec: usec(ago(300)), mainProcess: null, processes: [] });
    expect(diagnose(facts({ unit: failed, recentActions: [action(20, { jobId: null, error: REFUSED })] })).headline).toMatch(
      /no job ran\. It is still failed from before\.$/,
    );
  });

  it("other refusals in systemd's words; an unreachable systemd is not a refusal", () => {
    const manual = diagnose(
      facts({
        unit: inactive(),
        recentActions: [
          action(5, {
            jobId: null,
            error: "Operation refused, unit vllm-kimi-k25.service may be requested by dependency only (it is configured to refuse manual start/stop).",
          }),
        ],
      }),
    );
    expect(manual.headline).toMatch(
      /^The last start \(by alice, 5 s ago\) was refused by systemd: `Operation refused, unit vllm-kimi-k25\.service may be requested by dependency only/,
    );
    expect(diagnose(facts({ unit: inactive(), recentActions: [action(5, { jobId: null, error: "systemd is unreachable: connection refused" })] })).code).toBe(
      "stopped",
    );
  });

  it("a dependency result is the dependency case's; a queued job and a later real start supersede the request", () => {
    const dep = diagnose(
      facts({
        unit: inactive(),
        recentActions: [action(10, { jobId: 31 })],
        recentJobs: [finishedJob(10, "dependency", { jobId: 31 })],
        journal: [systemdLine(ago(10), "Dependency failed for vllm-kimi-k25.service - vLLM Kimi K2.5.", { priority: 3, jobResult: "dependency" })],
      }),
    );
    expect(dep.code).toBe("dependency-failed");
    expect(diagnose(facts({ unit: inactive({ result: "exec-condition", job: { id: 40, type: "start" } }), recentActions: [action(30)] })).code).toBe(
      "start-queued",
    );
    const ranSince = transitions("inactive/dead", [
      [ago(10), "active/running"],
      [ago(5), "inactive/dead"],
    ]);
    expect(diagnose(facts({ unit: inactive(), recentActions: [action(20, { jobId: null, error: REFUSED })], recentTransitions: ranSince })).code).toBe(
      "stopped",
    );
  });

  it("nobody started it, but a start would be refused (the agent read the required units)", () => {
    const d = diagnose(
      facts({
        unit: inactive({ requires: ["nothere.service"] }),
        dependencies: [{ name: "nothere.service", loadState: "not-found", activeState: "inactive", subState: "dead", result: "", manageable: false }],
      }),
    );
    expect(d).toMatchObject({ severity: "warning", code: "start-refused" });
    expect(d.headline).toBe("Not running, and a start would be refused: nothere.service, which it requires (Requires=/BindsTo=), is not installed.");
  });
});
