import { afterEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../contract/events";
import type { UnitTransition } from "../../contract/types";
import { createCallerFactory, type Context } from "../../trpc";
import { closeAgentParts, createAgentParts } from "../agentParts";
import { GpuAttributor } from "../gpu/attribution";
import { Hub } from "../hub/hub";
import { createAgentRouter } from "../router";
import { SampleHistory } from "../sampleHistory";
import { createSimulatedHost } from "../simulator/index";
import { detectCrashLoop, startLimitCanStop } from "./detect";
import { DEFAULT_CRASH_LOOP_RULE, parseCrashLoopRule } from "./rule";

const S = 1_000_000; // µs per second

function t(atS: number, active: string, sub: string, inRestartCycle = false, result = "exit-code"): UnitTransition {
  return {
    unit: "u.service",
    atUsec: atS * S,
    from: null,
    to: { activeState: active, subState: sub },
    result,
    mainPid: 0,
    controlPid: 0,
    nRestarts: 0,
    inRestartCycle,
  };
}

/** One Restart= cycle at second `s`, as systemd 252 goes through it. */
function cycle(s: number): UnitTransition[] {
  return [t(s, "failed", "failed", true), t(s + 0.1, "activating", "auto-restart", true), t(s + 5, "inactive", "dead", true), t(s + 5.1, "active", "running")];
}

describe("crash-loop rule", () => {
  it("parses N/M with a unit; the default is 5 in 10 min", () => {
    expect(parseCrashLoopRule(undefined)).toBe(DEFAULT_CRASH_LOOP_RULE);
    expect(parseCrashLoopRule("3/90s")).toEqual({ restarts: 3, windowMs: 90_000, text: "3/90s" });
    expect(parseCrashLoopRule(" 10/1h ")).toEqual({ restarts: 10, windowMs: 3600_000, text: "10/1h" });
    for (const bad of ["5", "5/10", "1/10m", "5/5s", "5/2d", "x/10m"]) expect(() => parseCrashLoopRule(bad)).toThrow(/RESTARTS\/WINDOW/);
  });
});

describe("detectCrashLoop", () => {
  const rule = parseCrashLoopRule("3/1m");
  it("N automatic restarts within the window, while the unit still cycles or runs between crashes", () => {
    const list = [t(0, "active", "running"), ...cycle(10), ...cycle(20), ...cycle(30)];
    expect(detectCrashLoop(list, 40_000, rule)).toEqual({ restarts: 3, windowMs: 60_000, rule: "3/1m", firstAtUsec: 10.1 * S, lastAtUsec: 30.1 * S });
    expect(detectCrashLoop(list.slice(0, -4), 40_000, rule)).toBeNull(); // two are not three
    // restarts older than the window no longer count
    expect(detectCrashLoop(list, 75_000, rule)).toBeNull();
  });

  it("ends when stopped by hand or given up on by systemd", () => {
    const list = [...cycle(10), ...cycle(20), ...cycle(30)];
    expect(detectCrashLoop([...list, t(36, "inactive", "dead")], 40_000, rule)).toBeNull();
    expect(detectCrashLoop([...list, t(36, "failed", "failed", false, "start-limit-hit")], 40_000, rule)).toBeNull();
    // the transient failed inside a cycle is not an end
    expect(detectCrashLoop([...list, t(36, "failed", "failed", true)], 40_000, rule)).not.toBeNull();
  });

  it("systemd's start limit can never stop Restart=always with RestartSec 5 s under the default 5 per 10 s", () => {
    const u = { restart: "always", restartUsec: 5 * S, startLimitBurst: 5, startLimitIntervalUsec: 10 * S };
    expect(startLimitCanStop(u)).toBe(false);
    expect(startLimitCanStop({ ...u, restartUsec: 2.5 * S })).toBe(false);
    expect(startLimitCanStop({ ...u, restartUsec: 100_000 })).toBe(true);
    expect(startLimitCanStop({ ...u, restartUsec: 100_000, startLimitIntervalUsec: 0 })).toBe(false);
    expect(startLimitCanStop({ ...u, restartUsec: 100_000, startLimitBurst: 0 })).toBe(false);
    expect(startLimitCanStop({ ...u, restart: "no" })).toBe(true);
  });
});

describe("crash-loop monitor and stop-the-loop (simulated host)", () => {
  const admin: Context = { actor: { user: "alice", role: "admin", unitPatterns: [] } };
  let close: () => Promise<void> = async () => {};
  afterEach(async () => close());

  it("marks the demo's crash-looping unit on its summary; stopLoop stops it, resets it and clears the marker", async () => {
    const host = createSimulatedHost({ unitGlobs: ["vllm-*.service"], gpuIntervalMs: 100, timing: { speed: 20 } });
    const hub = new Hub(host, new GpuAttributor(host.procs), new SampleHistory());
    createAgentParts(hub, { crashLoopRule: parseCrashLoopRule("2/10m") });
    const events: AgentEvent[] = [];
    hub.subscribe((e) => events.push(e.event));
    await hub.start();
    const shutdown = new AbortController();
    const caller = createCallerFactory(createAgentRouter({ hub, unitGlobs: ["vllm-*.service"], shutdown: shutdown.signal }))(admin);
    close = async () => {
      shutdown.abort();
      await closeAgentParts(hub);
      await hub.close();
    };
    const unit = "vllm-qwen-draft.service";
    const marked = await waitFor(() => hub.unit(unit)?.crashLoop, 8000);
    expect(marked).toMatchObject({ restarts: expect.any(Number), windowMs: 600_000, rule: "2/10m" });
    expect(marked.restarts).toBeGreaterThanOrEqual(2);
    // the marker rides on unit events and the snapshot too
    expect(events.some((e) => e.kind === "unit" && e.unit.name === unit && e.unit.crashLoop)).toBe(true);
    expect((hub.snapshot() as { units: { name: string; crashLoop?: unknown }[] }).units.find((u) => u.name === unit)?.crashLoop).toBeTruthy();
    // its start limit (4 per 60 s, RestartSec 4 s: 16 s < 60 s) can end it
    await waitFor(() => hub.unit(unit)?.crashLoop?.startLimitStops === true, 3000);

    const report = await caller.units.crashLoop({ name: unit });
    expect(report.restarts.length).toBeGreaterThanOrEqual(2);
    expect(report.restarts[0]).toMatchObject({ result: "exit-code", exit: "status=1" });
    expect(report.lastLogLine?.message).toMatch(/CUDA out of memory/);
    expect(report).toMatchObject({ restart: "on-failure", startLimitBurst: 4 });

    const r = await caller.units.stopLoop({ name: unit, reason: "OOM loop" });
    expect(r.evidence.restarts.length).toBeGreaterThanOrEqual(2);
    await waitFor(() => hub.recentActions().some((a) => a.unit === unit && a.action === "reset-failed" && a.reason === "OOM loop"), 5000);
    expect(
      hub
        .recentActions()
        .filter((a) => a.unit === unit)
        .map((a) => a.action),
    ).toEqual(["stop", "reset-failed"]);
    await waitFor(() => hub.unit(unit)?.activeState === "inactive" && !hub.unit(unit)?.crashLoop, 3000);
  }, 20_000);
});

async function waitFor<T>(probe: () => T | null | undefined | false, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== null && v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}
