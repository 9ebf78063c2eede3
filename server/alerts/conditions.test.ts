/** The rules as pure functions, and their configuration. */
import { describe, expect, it } from "vitest";
import type { GpuFault } from "../contract/faults";
import type { Readiness } from "../contract/readiness";
import type { GpuSample, UnitSummary } from "../contract/types";
import { FaultMemory, hostConditions, SinceClock, type HostView } from "./conditions";
import { AlertRulesError, defaultRules, parseAlertRules, ruleSetting } from "./rules";

const NOW = Date.UTC(2030, 0, 1, 12);
const MIN = 60_000;

function unit(name: string, over: Partial<UnitSummary> = {}): UnitSummary {
  return {
    name,
    description: name,
    activeState: "active",
    subState: "running",
    loadState: "loaded",
    unitFileState: "enabled",
    result: "success",
    mainPid: 100,
    controlPid: 0,
    nRestarts: 0,
    stateChangeUsec: (NOW - 60 * MIN) * 1000,
    job: null,
    ...over,
  };
}

function host(units: UnitSummary[], over: Partial<HostView> = {}): HostView {
  return {
    name: "gpu-a",
    state: "connected",
    sinceMs: NOW - 60 * MIN,
    error: null,
    bootId: "b1",
    units: new Map(units.map((u) => [u.name, u])),
    gpu: null,
    telemetry: null,
    ...over,
  };
}

const evaluate = (h: HostView, rules = defaultRules(), clock = new SinceClock(), faults = new FaultMemory(), now = NOW) =>
  hostConditions(h, now, rules, clock, faults);
const rulesOf = (h: HostView, ...rest: Parameters<typeof evaluate> extends [unknown, ...infer R] ? R : never) =>
  evaluate(h, ...rest).map((c) => `${c.rule} ${c.unit}`);

describe("conditions", () => {
  it("a failed unit: unit-failed with its result, since systemd's timestamp", () => {
    const c = evaluate(host([unit("a.service", { activeState: "failed", subState: "failed", result: "exit-code", stateChangeUsec: (NOW - 5000) * 1000 })]));
    expect(c).toEqual([
      { rule: "unit-failed", host: "gpu-a", unit: "a.service", severity: "critical", summary: "a.service failed (exit-code).", sinceMs: NOW - 5000 },
    ]);
  });

  it("a state held only for a moment (failed inside a Restart= cycle) is no alert yet; the engine is told when to look again", () => {
    const h = host([unit("a.service", { activeState: "failed", subState: "failed", result: "exit-code", stateChangeUsec: (NOW - 500) * 1000 })]);
    const ready: number[] = [];
    expect(hostConditions(h, NOW, defaultRules(), new SinceClock(), new FaultMemory(), { minHoldMs: 2000, onPending: (at) => ready.push(at) })).toEqual([]);
    expect(ready).toEqual([NOW + 1500]);
    expect(hostConditions(h, NOW + 1500, defaultRules(), new SinceClock(), new FaultMemory(), { minHoldMs: 2000 }).map((c) => c.rule)).toEqual(["unit-failed"]);
  });

  it("self-heal: open from the agent's restart while the unit reloads, critical when it did not come back, gone once it serves", () => {
    const marker = (state: "restarting" | "loading" | "back" | "not-back" | "held-back") =>
      host([
        unit("v.service", {
          selfHeal: {
            state,
            atMs: NOW - 30_000,
            reason: "6 probes failed over 5 min: HTTP 503",
            operationId: "op-1",
            message: "gpudeck restarted it by itself at 11:59:30 UTC.",
            inLastHour: 1,
            max: 2,
          },
        }),
      ]);
    const loading = evaluate(marker("loading"));
    expect(loading).toEqual([
      {
        rule: "self-heal",
        host: "gpu-a",
        unit: "v.service",
        severity: "warning",
        summary:
          "gpudeck restarted v.service by itself after its readiness probe failed (6 probes failed over 5 min: HTTP 503). gpudeck restarted it by itself at 11:59:30 UTC.",
        sinceMs: NOW - 30_000,
      },
    ]);
    expect(evaluate(marker("not-back"))[0]!.severity).toBe("critical");
    expect(rulesOf(marker("back"))).toEqual([]);
    expect(rulesOf(marker("held-back"))).toEqual([]);
    expect(rulesOf(marker("restarting"), parseAlertRules('{"self-heal": false}'))).toEqual([]);
  });

  it("start limit hit is its own rule, and a plain failure where that rule is off", () => {
    const h = host([unit("a.service", { activeState: "failed", subState: "failed", result: "start-limit-hit" })]);
    expect(rulesOf(h)).toEqual(["start-limit-hit a.service"]);
    expect(rulesOf(h, parseAlertRules('{"start-limit-hit": false}'))).toEqual(["unit-failed a.service"]);
  });

  it("stuck activating: only after the threshold, with the sub-state, measured across sub-state changes", () => {
    const clock = new SinceClock();
    const at = (sub: string, changedMin: number) =>
      host([unit("a.service", { activeState: "activating", subState: sub, stateChangeUsec: (NOW - changedMin * MIN) * 1000 })]);
    expect(rulesOf(at("start-pre", 9), defaultRules(), clock)).toEqual([]);
    clock.sweep();
    // start-pre → start resets systemd's StateChangeTimestamp, not the time it has been activating
    const c = evaluate(at("start", 0), defaultRules(), clock, new FaultMemory(), NOW + 2 * MIN);
    expect(c.map((x) => x.rule)).toEqual(["stuck-activating"]);
    expect(c[0]!.summary).toBe("a.service has been activating (start) for 11 min.");
    expect(c[0]!.sinceMs).toBe(NOW - 9 * MIN);
  });

  it("auto-restart is the crash-loop rule's, not a stuck start", () => {
    const h = host([unit("a.service", { activeState: "activating", subState: "auto-restart", stateChangeUsec: (NOW - 30 * MIN) * 1000 })]);
    expect(rulesOf(h)).toEqual([]);
    const looping = host([
      unit("a.service", {
        activeState: "activating",
        subState: "auto-restart",
        crashLoop: { restarts: 6, windowMs: 10 * MIN, rule: "5/10m", firstAtUsec: (NOW - 8 * MIN) * 1000, lastAtUsec: NOW * 1000, startLimitStops: false },
      }),
    ]);
    expect(evaluate(looping)[0]).toMatchObject({
      rule: "crash-loop",
      summary: "a.service is restarting in a loop: 6 restarts within 10 min.",
      sinceMs: NOW - 8 * MIN,
    });
  });

  it("active but not serving longer than the threshold, where readiness exists", () => {
    const readiness = (state: Readiness["state"], sinceMs: number): Readiness => ({
      state,
      engine: "vllm",
      stage: state === "loading" ? "loading weights" : null,
      progress: null,
      reason: state === "not-serving" ? "connection refused" : null,
      sinceMs,
      probe: null,
      models: [],
    });
    expect(rulesOf(host([unit("a.service", { readiness: readiness("not-serving", NOW - 5 * MIN) })]))).toEqual([]);
    expect(evaluate(host([unit("a.service", { readiness: readiness("not-serving", NOW - 11 * MIN) })]))[0]).toMatchObject({
      rule: "not-serving",
      summary: "a.service is active but not serving: connection refused (for 11 min).",
    });
    expect(rulesOf(host([unit("a.service", { readiness: readiness("serving", NOW - 60 * MIN) })]))).toEqual([]);
    expect(rulesOf(host([unit("a.service")]))).toEqual([]);
    // after a self-heal restart: what was done, and when it should serve again
    const selfHeal = {
      state: "loading" as const,
      atMs: NOW - 12 * MIN,
      reason: "its readiness probe failed for 5 min",
      operationId: "b-o1",
      message: "gpudeck restarted it by itself at 03:00:00 UTC (self-heal); it is starting again (loading weights).",
      inLastHour: 1,
      max: 2,
    };
    const loading = { ...readiness("loading", NOW - 11 * MIN), estimatedReadyAtMs: NOW + 3 * MIN };
    const at = new Date(NOW + 3 * MIN).toISOString().slice(11, 19);
    expect(evaluate(host([unit("a.service", { readiness: loading })]))[0]?.summary).toBe(
      `a.service is active but still loading weights, expected to serve around ${at} UTC (for 11 min).`,
    );
    expect(evaluate(host([unit("a.service", { readiness: loading, selfHeal })]))[0]?.summary).toBe(
      `a.service is active but still loading weights, expected to serve around ${at} UTC (for 11 min). ${selfHeal.message}`,
    );
    // an estimate already passed is not repeated as if it held
    expect(evaluate(host([unit("a.service", { readiness: { ...loading, estimatedReadyAtMs: NOW - 1 } })]))[0]?.summary).toBe(
      "a.service is active but still loading weights (for 11 min).",
    );
  });

  it("GPU memory held by an exited process longer than the threshold, per unit", () => {
    const gpu: GpuSample = {
      atMs: NOW,
      gpus: [0, 1].map((index) => ({
        uuid: `GPU-${index}`,
        index,
        name: "H100",
        pciBusId: "",
        memoryTotalMiB: 81_559,
        memoryUsedMiB: 70_000,
        utilizationPct: 0,
        temperatureC: 30,
        powerW: 70,
        unattributedMiB: 0,
        holders: [
          {
            kind: "exited" as const,
            pid: 4242,
            unit: "a.service",
            processName: "python",
            cmdline: [],
            state: "gone" as const,
            usedMiB: 70_000,
            exitedAtMs: NOW - 6 * MIN,
          },
        ],
      })),
    };
    const c = evaluate(host([], { gpu }));
    expect(c).toHaveLength(1);
    expect(c[0]).toMatchObject({ rule: "gpu-memory-exited", unit: "a.service", summary: "137 GiB on GPU 0, 1 still held by exited processes of a.service." });
  });

  it("an agent down longer than the threshold; its units' alerts are not judged meanwhile", () => {
    const failedUnit = unit("a.service", { activeState: "failed", result: "exit-code" });
    expect(rulesOf(host([failedUnit], { state: "down", sinceMs: NOW - MIN, error: "connection refused" }))).toEqual([]);
    const c = evaluate(host([failedUnit], { state: "down", sinceMs: NOW - 3 * MIN, error: "connection refused" }));
    expect(c.map((x) => `${x.rule} '${x.unit}'`)).toEqual(["agent-down ''"]);
    expect(c[0]!.summary).toContain("connection refused");
    // before the first snapshot the panel knows nothing of the units
    expect(rulesOf(host([failedUnit], { bootId: null }))).toEqual([]);
  });

  it("GPU telemetry stale longer than the threshold", () => {
    const telemetry = { state: "stale" as const, message: "no sample for 30 s", sinceMs: NOW - 3 * MIN };
    expect(evaluate(host([], { telemetry }))[0]).toMatchObject({ rule: "gpu-telemetry-stale", unit: "", severity: "warning" });
    expect(rulesOf(host([], { telemetry: { ...telemetry, state: "ok" } }))).toEqual([]);
  });

  it("an Xid fault holds for the rule's time after the last one; info-level faults are not alerts", () => {
    const faults = new FaultMemory();
    const fault = (code: number, severity: GpuFault["severity"], atMs: number): GpuFault => ({
      id: `b-x${code}`,
      kind: "xid",
      code,
      title: "GPU has fallen off the bus",
      meaning: "",
      advice: "",
      resetRequired: true,
      severity,
      atMs,
      pci: "0000:3b:00",
      gpuUuid: null,
      gpuIndex: 3,
      pid: null,
      processName: null,
      unit: "a.service",
      text: "",
    });
    faults.record("gpu-a", fault(13, "info", NOW));
    expect(rulesOf(host([]), defaultRules(), new SinceClock(), faults)).toEqual([]);
    faults.record("gpu-a", fault(79, "critical", NOW - 10 * MIN));
    const c = evaluate(host([]), defaultRules(), new SinceClock(), faults);
    expect(c[0]).toMatchObject({ rule: "gpu-xid", unit: "a.service", severity: "critical" });
    expect(c[0]!.summary).toContain("Xid 79 on GPU 3");
    expect(rulesOf(host([]), defaultRules(), new SinceClock(), faults, NOW + 25 * MIN)).toEqual([]);
  });
});

describe("GPUDECK_ALERT_RULES", () => {
  it("defaults: every rule on, the issue's thresholds", () => {
    const t = defaultRules();
    expect(ruleSetting(t, "stuck-activating", "gpu-a", "x.service")).toMatchObject({ afterMs: 10 * MIN });
    expect(ruleSetting(t, "unit-failed", "gpu-a", "x.service")).toMatchObject({ afterMs: 0 });
  });

  it("per host/unit pattern, the first match wins; what matches none keeps the default", () => {
    const t = parseAlertRules(
      JSON.stringify({
        "stuck-activating": [
          { match: "gpu-a:vllm-kimi-*", afterMinutes: 30 },
          { match: ["*:test-*"], enabled: false },
        ],
        "agent-down": { afterSeconds: 30 },
        "crash-loop": false,
      }),
    );
    expect(ruleSetting(t, "stuck-activating", "gpu-a", "vllm-kimi-k25.service")).toMatchObject({ afterMs: 30 * MIN });
    expect(ruleSetting(t, "stuck-activating", "gpu-b", "vllm-kimi-k25.service")).toMatchObject({ afterMs: 10 * MIN });
    expect(ruleSetting(t, "stuck-activating", "gpu-b", "test-1.service")).toBeNull();
    expect(ruleSetting(t, "agent-down", "gpu-b", "")).toMatchObject({ afterMs: 30_000 });
    expect(ruleSetting(t, "crash-loop", "gpu-b", "x.service")).toBeNull();
  });

  it("mistakes are refused with the rule and the key", () => {
    expect(() => parseAlertRules("{")).toThrow(AlertRulesError);
    expect(() => parseAlertRules('{"unit-failde": false}')).toThrow(/unknown rule unit-failde/);
    expect(() => parseAlertRules('{"agent-down": {"afterMinutes": -1}}')).toThrow(/agent-down/);
    expect(() => parseAlertRules('{"agent-down": {"after": 1}}')).toThrow(/agent-down/);
  });
});
