/** Case 8, dependencies (cases/dependencyFailed.ts), through diagnose(). */
import { describe, expect, it } from "vitest";
import { diagnose } from "../diagnose";
import type { DependencyState } from "../types";
import { ago, evidence, facts, systemdLine, UNIT, unit, usec, values } from "../fixtures";

describe("case 8 — dependency failed", () => {
  const inactiveUnit = () =>
    unit({
      activeState: "inactive",
      subState: "dead",
      mainPid: 0,
      mainProcess: null,
      processes: [],
      stateChangeUsec: usec(ago(3600)),
      timestamps: { inactiveExitUsec: usec(ago(7200)), activeEnterUsec: usec(ago(7190)), activeExitUsec: usec(ago(3600)), inactiveEnterUsec: usec(ago(3600)) },
    });

  it("dependency failed (journal line with JOB_RESULT=dependency)", () => {
    const journal = [systemdLine(ago(30), "Dependency failed for vllm-kimi-k25.service - vLLM Kimi K2.5.", { priority: 3, jobResult: "dependency" })];
    const d = diagnose(facts({ unit: inactiveUnit(), journal }));
    expect(d.code).toBe("dependency-failed");
    expect(d.severity).toBe("critical");
    expect(d.headline).toMatch(/^Not started 30 s ago because a unit it requires failed to start/);
    expect(values(d)).toContain("Dependency failed for");
  });

  it("dependency failed (job event only)", () => {
    const d = diagnose(
      facts({ unit: inactiveUnit(), recentJobs: [{ jobId: 812, unit: UNIT, jobType: "start", phase: "finished", result: "dependency", atMs: ago(12) }] }),
    );
    expect(d.code).toBe("dependency-failed");
    expect(evidence(d, "Start job")?.value).toBe('#812 start finished with result "dependency"');
  });

  it("an old dependency failure is superseded by a later start", () => {
    const journal = [systemdLine(ago(9000), "Dependency failed for vllm-kimi-k25.service - vLLM Kimi K2.5.")];
    expect(diagnose(facts({ unit: inactiveUnit(), journal })).code).toBe("stopped");
  });
});

describe("case 8 — naming the failed dependency", () => {
  const REQUIRES = ["models-nfs.mount", "vllm-weights-sync.service", "system.slice", "sysinit.target"];
  const dependencyLine = () => [
    systemdLine(ago(30), "Dependency failed for vllm-kimi-k25.service - vLLM Kimi K2.5.", { priority: 3, jobResult: "dependency" }),
  ];
  const inactive = (requires = REQUIRES) =>
    unit({
      activeState: "inactive",
      subState: "dead",
      mainPid: 0,
      mainProcess: null,
      processes: [],
      requires,
      stateChangeUsec: usec(ago(3600)),
      timestamps: { inactiveExitUsec: usec(ago(7200)), activeEnterUsec: usec(ago(7190)), activeExitUsec: usec(ago(3600)), inactiveEnterUsec: usec(ago(3600)) },
    });
  const dep = (name: string, state: string, over: Partial<DependencyState> = {}): DependencyState => {
    const [activeState, subState] = state.split("/");
    return { name, loadState: "loaded", activeState, subState, result: "success", manageable: false, ...over };
  };
  const up = () => [
    dep("models-nfs.mount", "active/mounted"),
    dep("vllm-weights-sync.service", "active/exited", { manageable: true }),
    dep("system.slice", "active/active"),
    dep("sysinit.target", "active/active"),
  ];
  const withDeps = (dependencies: DependencyState[] | undefined, u = inactive()) => diagnose(facts({ unit: u, journal: dependencyLine(), dependencies }));
  const replace = (list: DependencyState[], d: DependencyState) => list.map((x) => (x.name === d.name ? d : x));

  it("names a failed dependency in the allow-list and offers to open it", () => {
    const d = withDeps(replace(up(), dep("vllm-weights-sync.service", "failed/failed", { result: "exit-code", manageable: true })));
    expect(d.code).toBe("dependency-failed");
    expect(d.severity).toBe("critical");
    expect(d.headline).toBe(
      "Not started 30 s ago because vllm-weights-sync.service, which it requires, failed (result exit-code); the problem is in that unit, not in this one.",
    );
    expect(d.nextStep).toEqual({
      text: "Open vllm-weights-sync.service, fix why it failed, then start this one again.",
      action: { kind: "open-unit", unit: "vllm-weights-sync.service" },
    });
    expect(evidence(d, "Requires")?.value).toBe("vllm-weights-sync.service: failed, result exit-code");
    expect(evidence(d, "Other required units")?.value).toBe("models-nfs.mount is active (mounted), system.slice is active and sysinit.target is active");
    expect(values(d)).toContain("Dependency failed for"); // the journal line stays
  });

  it("a failed dependency outside the allow-list is named, with systemctl instead of a button", () => {
    const d = withDeps(replace(up(), dep("models-nfs.mount", "failed/failed", { result: "exit-code" })));
    expect(d.headline).toMatch(/^Not started 30 s ago because models-nfs\.mount, which it requires, failed \(result exit-code\);/);
    expect(d.nextStep?.action).toBeUndefined();
    expect(d.nextStep?.text).toBe(
      "Check models-nfs.mount with `systemctl status models-nfs.mount` and `journalctl -u models-nfs.mount` (it is not among this agent's units), fix it, then start this one again.",
    );
    expect(evidence(d, "Requires")?.value).toBe("models-nfs.mount: failed, result exit-code, not among this agent's units");
  });

  it("a dependency that cannot load (not-found, masked, bad unit file)", () => {
    const missing = withDeps(replace(up(), dep("models-nfs.mount", "inactive/dead", { loadState: "not-found", result: "" })));
    expect(missing.headline).toContain("because models-nfs.mount, which it requires, does not exist (LoadState=not-found);");
    expect(evidence(missing, "Requires")?.value).toBe("models-nfs.mount: inactive (dead), LoadState=not-found, not among this agent's units");
    const masked = withDeps(replace(up(), dep("vllm-weights-sync.service", "inactive/dead", { loadState: "masked", manageable: true })));
    expect(masked.headline).toContain("because vllm-weights-sync.service, which it requires, is masked;");
    expect(masked.nextStep?.action).toEqual({ kind: "open-unit", unit: "vllm-weights-sync.service" });
  });

  it("several failed dependencies: all named, the first one's step", () => {
    const d = withDeps(
      replace(
        replace(up(), dep("models-nfs.mount", "failed/failed", { result: "timeout" })),
        dep("vllm-weights-sync.service", "failed/failed", { result: "exit-code", manageable: true }),
      ),
    );
    expect(d.headline).toBe(
      "Not started 30 s ago because units it requires cannot run: models-nfs.mount failed (result timeout) and vllm-weights-sync.service failed (result exit-code); the problem is in those units, not in this one.",
    );
    expect(d.evidence.filter((e) => e.label === "Requires").map((e) => e.value.split(":")[0])).toEqual(["models-nfs.mount", "vllm-weights-sync.service"]);
    // the first one is outside the allow-list: no button, even though the second is inside it
    expect(d.nextStep?.action).toBeUndefined();
    expect(d.nextStep?.text).toMatch(/^Check models-nfs\.mount with `systemctl status models-nfs\.mount`/);
  });

  it("a failed dependency wins over one that merely is not running (a chain: its own start was cancelled)", () => {
    const chain = withDeps(replace(up(), dep("vllm-weights-sync.service", "inactive/dead", { manageable: true })));
    expect(chain.headline).toContain("because vllm-weights-sync.service, which it requires, is inactive (dead);");
    expect(chain.nextStep).toEqual({
      text: "Open vllm-weights-sync.service, fix why it is not running, then start this one again.",
      action: { kind: "open-unit", unit: "vllm-weights-sync.service" },
    });
    const both = withDeps(
      replace(
        replace(up(), dep("vllm-weights-sync.service", "inactive/dead", { manageable: true })),
        dep("models-nfs.mount", "failed/failed", { result: "exit-code" }),
      ),
    );
    expect(both.headline).toContain("because models-nfs.mount, which it requires, failed (result exit-code);");
    expect(evidence(both, "Other required units")?.value).toContain("vllm-weights-sync.service is inactive (dead)");
  });

  it("every dependency is up again: says so and offers to start it", () => {
    const d = withDeps(up());
    expect(d.code).toBe("dependency-failed");
    expect(d.severity).toBe("warning");
    expect(d.headline).toBe(
      'Not started 30 s ago because a unit it requires failed to start (job result "dependency"); the units it requires are up now (models-nfs.mount, vllm-weights-sync.service, system.slice and 1 more), so starting it again should work.',
    );
    expect(d.nextStep).toEqual({ text: "Start it again.", action: { kind: "start", unit: UNIT } });
  });

  it("all checked ones up but some not checked: no promise, the generic advice", () => {
    const many = [...REQUIRES, ...Array.from({ length: 20 }, (_, i) => `extra-${i}.service`)];
    const d = withDeps(up(), inactive(many));
    expect(d.headline).toMatch(
      /^Not started 30 s ago because a unit it requires failed to start \(job result "dependency"\); the problem is in that unit, not in this one\.$/,
    );
    expect(d.nextStep?.action).toBeUndefined();
    expect(evidence(d, "Not checked")?.value).toBe(
      "extra-0.service, extra-1.service, extra-2.service, extra-3.service, extra-4.service, extra-5.service and 14 more",
    );
  });

  it("without dependency facts (or none readable) the diagnosis stays as before", () => {
    for (const dependencies of [undefined, []]) {
      const d = withDeps(dependencies);
      expect(d.headline).toBe(
        'Not started 30 s ago because a unit it requires failed to start (job result "dependency"); the problem is in that unit, not in this one.',
      );
      expect(d.nextStep).toEqual({
        text: "Check the units this one Requires=/BindsTo= (`systemctl list-dependencies`), fix the failed one, then start this one.",
      });
    }
  });

  it("dependency facts never turn another diagnosis into dependency-failed", () => {
    const failedDep = [dep("models-nfs.mount", "failed/failed", { result: "exit-code" })];
    expect(diagnose(facts({ unit: inactive(), dependencies: failedDep })).code).toBe("stopped");
    expect(diagnose(facts({ dependencies: failedDep })).code).toBe("healthy");
  });

  it("a button only ever points at this unit or at a dependency marked manageable", () => {
    const states = ["failed/failed", "inactive/dead", "active/running", "activating/start-pre"];
    const loads = ["loaded", "not-found", "masked"];
    for (const s1 of states)
      for (const s2 of states)
        for (const load of loads)
          for (const manageable of [false, true]) {
            const deps = [
              dep("models-nfs.mount", s1, { loadState: load }),
              dep("vllm-weights-sync.service", s2, { manageable }),
              dep("system.slice", "active/active"),
            ];
            const d = withDeps(deps, inactive(deps.map((x) => x.name)));
            const target = d.nextStep?.action?.unit;
            if (target === undefined || target === UNIT) continue;
            expect(deps.find((x) => x.name === target)?.manageable, `${s1} ${s2} ${load} ${manageable}: ${target}`).toBe(true);
          }
  });
});

// ---------------------------------------------------------------------------------------
