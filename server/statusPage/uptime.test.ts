/** Uptime over 24 h / 7 d / 30 d against a known history; incidents' causes never leak internals. */
import { describe, expect, it } from "vitest";
import type { AlertView } from "../contract/alerts";
import type { UnitTransition } from "../contract/types";
import { incidentsOf, publicCause, safeHeadline } from "./incidents";
import { combine, serviceDefs, unitStatus, type StatusHost } from "./services";
import { anySteps, unitSteps, upFraction, uptimes } from "./uptime";

const H = 3_600_000;
const D = 24 * H;
const NOW = Date.UTC(2030, 5, 30, 12);

function t(atMs: number, activeState: string, subState = activeState === "active" ? "running" : "dead"): UnitTransition {
  return {
    unit: "u.service",
    atUsec: atMs * 1000,
    from: null,
    to: { activeState, subState },
    result: "success",
    mainPid: 0,
    controlPid: 0,
    nRestarts: 0,
    inRestartCycle: false,
  };
}

describe("uptime", () => {
  // known for 40 days: up, except down 6 h ten days ago, down 1 h two days ago, and 30 min this morning
  const history = [
    t(NOW - 40 * D, "active"),
    t(NOW - 10 * D, "failed", "failed"),
    t(NOW - 10 * D + 6 * H, "activating", "start-pre"),
    t(NOW - 10 * D + 6 * H + 60_000, "active"),
    t(NOW - 2 * D, "inactive"),
    t(NOW - 2 * D + H, "active"),
    t(NOW - 3 * H, "failed", "failed"),
    t(NOW - 2.5 * H, "active"),
  ];

  it("is the fraction of each window the unit was active", () => {
    const u = uptimes(unitSteps(history), NOW);
    expect(u["24h"]).toBeCloseTo(1 - 0.5 / 24, 10);
    expect(u["7d"]).toBeCloseTo(1 - 1.5 / (7 * 24), 10);
    // 6 h + 1 min activating, 1 h, 30 min
    expect(u["30d"]).toBeCloseTo(1 - (7.5 + 1 / 60) / (30 * 24), 10);
  });

  it("counts only the time known: a unit first seen a day ago is judged on that day", () => {
    const young = [t(NOW - D, "active"), t(NOW - 12 * H, "failed", "failed"), t(NOW - 6 * H, "active")];
    const u = uptimes(unitSteps(young), NOW);
    expect(u["24h"]).toBeCloseTo(0.75, 10);
    expect(u["7d"]).toBeCloseTo(0.75, 10);
    expect(upFraction([], NOW, D)).toBeNull();
  });

  it("where readiness is reported, active but loading or not serving is not up", () => {
    const steps = unitSteps(
      [t(NOW - D, "active")],
      [
        { atMs: NOW - D, to: { state: "loading" } },
        { atMs: NOW - 22 * H, to: { state: "serving" } },
        { atMs: NOW - 6 * H, to: { state: "not-serving" } },
        { atMs: NOW - 5 * H, to: { state: "serving" } },
      ],
    );
    expect(upFraction(steps, NOW, D)).toBeCloseTo(21 / 24, 10);
  });

  it("a group is up while any of its units is", () => {
    const a = unitSteps([t(NOW - D, "active"), t(NOW - 12 * H, "failed", "failed")]);
    const b = unitSteps([t(NOW - D, "failed", "failed"), t(NOW - 18 * H, "active"), t(NOW - 6 * H, "failed", "failed")]);
    // a up 0–12 h, b up 6–18 h: together up 0–18 h
    expect(upFraction(anySteps([a, b]), NOW, D)).toBeCloseTo(18 / 24, 10);
  });
});

describe("service state in plain words", () => {
  const host = (units: Record<string, Partial<import("../contract/types").UnitSummary>>, over: Partial<StatusHost> = {}): StatusHost => ({
    name: "gpu-a",
    state: "connected",
    sinceMs: NOW,
    bootId: "b",
    units: new Map(
      Object.entries(units).map(([name, u]) => [
        name,
        {
          name,
          description: "",
          activeState: "active",
          subState: "running",
          loadState: "loaded",
          unitFileState: "",
          result: "success",
          mainPid: 1234,
          controlPid: 0,
          nRestarts: 0,
          stateChangeUsec: Date.UTC(2030, 5, 30, 3, 12) * 1000,
          job: null,
          ...u,
        },
      ]),
    ),
    ...over,
  });

  it("Serving / Starting — loading weights / Down since 03:12 UTC / unknown while the host is away", () => {
    expect(unitStatus(host({ "a.service": {} }), "a.service")).toMatchObject({ state: "serving", words: "Serving" });
    const loading = {
      state: "loading" as const,
      engine: "vllm" as const,
      stage: "loading weights",
      progress: null,
      reason: null,
      sinceMs: NOW,
      probe: null,
      models: [],
    };
    expect(unitStatus(host({ "a.service": { readiness: loading } }), "a.service").words).toBe("Starting — loading weights");
    expect(unitStatus(host({ "a.service": { activeState: "activating", subState: "start-pre" } }), "a.service").words).toBe("Starting — preparing");
    // the agent's estimate from the unit's last starts; once passed, never shown as if it held
    const eta = { ...loading, estimatedReadyAtMs: Date.UTC(2025, 4, 1, 14, 20) };
    expect(unitStatus(host({ "a.service": { readiness: eta } }), "a.service", eta.estimatedReadyAtMs - 60_000).words).toBe(
      "Starting — loading weights, expected back around 14:20 UTC",
    );
    expect(unitStatus(host({ "a.service": { readiness: eta } }), "a.service", eta.estimatedReadyAtMs + 1).words).toBe(
      "Starting — loading weights, taking longer than usual",
    );
    // an engine's stage that says more than words (a path) is not shown
    expect(unitStatus(host({ "a.service": { readiness: { ...loading, stage: "loading /models/secret-70b shard 3" } } }), "a.service").words).toBe(
      "Starting — loading",
    );
    expect(unitStatus(host({ "a.service": { activeState: "failed", subState: "failed" } }), "a.service").words).toBe("Down since 03:12 UTC");
    expect(unitStatus(host({ "a.service": {} }, { state: "down" }), "a.service").state).toBe("unknown");
  });

  it("a group: all alike keeps the state; some up is degraded", () => {
    const up = { state: "serving" as const, words: "Serving", sinceMs: 1 };
    const down = { state: "down" as const, words: "Down", sinceMs: 2 };
    expect(combine([up, up]).state).toBe("serving");
    expect(combine([up, down])).toMatchObject({ state: "degraded", words: "Degraded — 1 of 2 up" });
  });

  it("no groups named: every unit of every host, under its Description, duplicates told apart", () => {
    const h = (name: string) => ({ ...host({ "a.service": { description: "Kimi chat" }, "b.service": {} }), name });
    expect(serviceDefs([], [h("gpu-b"), h("gpu-a")]).map((d) => d.name)).toEqual(["Kimi chat", "b.service", "Kimi chat (2)", "b.service (2)"]);
    const named = serviceDefs([{ name: "Kimi K2.5 chat", units: ["gpu-a:a.service"] }], [h("gpu-a")]);
    expect(named).toEqual([{ id: expect.stringMatching(/^[0-9a-f]{12}$/), name: "Kimi K2.5 chat", units: [{ host: "gpu-a", unit: "a.service" }] }]);
  });
});

describe("incidents", () => {
  it("a headline with a command line, a PID, a path, a setting or a unit name is never shown; a plain phrase stands in", () => {
    for (const headline of [
      "Waiting in ExecStartPre for GPU memory: 598 GiB on GPUs 0–7 is held by PID 4242 outside any systemd unit (`python serve.py`).",
      "ExecStartPre `/usr/local/bin/wait-gpu.sh` failed with status 1.",
      "The start phase was still running when TimeoutStartSec=10 min ran out.",
      "vllm-kimi.service is masked (its unit file points to /dev/null).",
    ]) {
      expect(safeHeadline(headline)).toBeNull();
    }
    expect(
      publicCause("unit-failed", {
        headline: "ExecStartPre `/x` failed with status 1.",
        code: "start-pre-failed",
        severity: "critical",
        nextStep: null,
        evidence: [],
      }),
    ).toBe("A preparation step before the start failed.");
    expect(
      publicCause("unit-failed", {
        headline: "The kernel's OOM killer killed a process of the unit.",
        code: "oom-killed",
        severity: "critical",
        nextStep: null,
        evidence: [],
      }),
    ).toBe("The kernel's OOM killer killed a process of the unit.");
    expect(publicCause("crash-loop", null)).toBe("The service kept crashing and restarting.");
  });

  it("from the alert history: start, end, cause; overlapping alerts of one service are one incident", () => {
    const a = (id: number, rule: AlertView["rule"], sinceMs: number, resolvedAtMs: number | null): AlertView => ({
      id,
      rule,
      host: "gpu-a",
      unit: "a.service",
      severity: "critical",
      summary: "",
      sinceMs,
      openedAtMs: sinceMs,
      resolvedAtMs,
      diagnosis: null,
      diagnosisUnavailable: null,
      silenced: false,
    });
    const incidents = incidentsOf([
      a(1, "unit-failed", NOW - 5 * H, NOW - 4 * H),
      a(2, "crash-loop", NOW - 4.5 * H, NOW - 3 * H),
      a(3, "unit-failed", NOW - H, null),
      a(4, "agent-down", NOW - 2 * H, NOW),
    ]);
    expect(incidents).toEqual([
      { startMs: NOW - H, endMs: null, cause: "The service failed." },
      { startMs: NOW - 5 * H, endMs: NOW - 3 * H, cause: "The service failed." },
    ]);
  });
});
