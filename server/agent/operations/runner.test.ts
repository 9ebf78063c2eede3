/**
 * GPU-aware restarts through the agent's own router, on the simulated host (speed 20: the
 * demo's 30 s drain takes 1.5 s): the cure for the demo's incident, the refusal beside a foreign
 * process, one at a time per unit, cancel, timeout, and a unified-memory (GB10) host.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../contract/events";
import type { Operation } from "../../contract/operations";
import { createCallerFactory, type Context } from "../../trpc";
import { closeAgentParts } from "../agentParts";
import { GpuAttributor } from "../gpu/attribution";
import { MemoryPoolAttributor } from "../gpu/memoryPool";
import { Hub } from "../hub/hub";
import { createAgentRouter } from "../router";
import { SampleHistory } from "../sampleHistory";
import { createSimulatedHost } from "../simulator/index";
import type { SimProfile } from "../simulator/profiles";

const admin: Context = { actor: { user: "alice", role: "admin", unitPatterns: [] } };
const KIMI = "vllm-kimi-k25.service";

async function setup(profile: SimProfile = "incident") {
  const host = createSimulatedHost({ unitGlobs: ["vllm-*.service"], gpuIntervalMs: 50, timing: { speed: 20 }, profile });
  const hub = new Hub(host, new MemoryPoolAttributor(new GpuAttributor(host.procs), host.procs.meminfo), new SampleHistory());
  await hub.start();
  const shutdown = new AbortController();
  const caller = createCallerFactory(createAgentRouter({ hub, unitGlobs: ["vllm-*.service"], shutdown: shutdown.signal }))(admin);
  const events: AgentEvent[] = [];
  hub.subscribe((e) => events.push(e.event));
  const close = async () => {
    shutdown.abort();
    await closeAgentParts(hub);
    await hub.close();
  };
  return { host, hub, caller, events, close };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** The GPU-aware answer of units.restart/start (a plain action has no operation). */
async function gpuAware<T extends object>(call: Promise<T>): Promise<Extract<T, { operationId: string }>> {
  const r = await call;
  if (!("operationId" in r)) throw new Error("no operation in the result");
  return r as Extract<T, { operationId: string }>;
}

async function until<T>(what: string, probe: () => T | null | undefined | false, timeoutMs = 8000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== null && v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function opEvents(s: Setup, id: string): Operation[] {
  return s.events.flatMap((e) => (e.kind === "operation" && e.operation.id === id ? [e.operation] : []));
}

function stepsOf(s: Setup, id: string): string[] {
  const steps: string[] = [];
  for (const o of opEvents(s, id)) if (steps.at(-1) !== o.step) steps.push(o.step);
  return steps;
}

const ended = (s: Setup, id: string) => opEvents(s, id).find((o) => ["started", "failed", "timed-out", "canceled"].includes(o.step));

/** Kimi holding its memory on all 8 of its GPUs. */
async function kimiLoaded(s: Setup): Promise<void> {
  await until("Kimi on its GPUs", () => s.hub.gpuNow()?.gpus.filter((g) => g.holders.some((h) => h.unit === KIMI && h.kind === "unit")).length === 8);
}

describe("GPU-aware restart (simulated host)", () => {
  let s: Setup;
  afterEach(async () => s?.close());

  it("the incident cured: after a kill, it waits for the drain and starts only then (no start-pre polling)", async () => {
    s = await setup();
    await kimiLoaded(s);
    await s.caller.units.kill({ name: KIMI });
    await until("exited holders", () => s.hub.gpuNow()?.gpus.some((g) => g.holders.some((h) => h.kind === "exited" && h.unit === KIMI)));
    const r = await gpuAware(s.caller.units.restart({ name: KIMI, waitForGpus: true, reason: "after the kill" }));
    expect(r).toMatchObject({ jobId: null, actionId: null, operationId: expect.stringMatching(/-o1$/) });
    expect(r.operation).toMatchObject({ unit: KIMI, kind: "restart", step: "waiting-for-gpus", user: "alice", reason: "after the kill" });
    expect(r.operation.gpus.map((g) => g.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(r.operation.timeoutSource).toBe("unit");
    const done = await until("the end", () => ended(s, r.operationId), 15_000);
    expect(done.step).toBe("started");
    // the failed unit needed no stop
    expect(stepsOf(s, r.operationId)).toEqual(["waiting-for-gpus", "starting", "started"]);
    const waiting = opEvents(s, r.operationId).filter((o) => o.step === "waiting-for-gpus");
    expect(waiting[0]!.heldMiB).toBeGreaterThan(0);
    expect(waiting.every((o) => typeof o.heldMiB === "number" && Array.isArray(o.pids))).toBe(true);
    expect(waiting.at(-1)!.heldMiB).toBe(0);
    // the start came after the drain: no exited holder of Kimi in any sample after "starting"
    const startingAt = opEvents(s, r.operationId).find((o) => o.step === "starting")!.atMs;
    await until("samples after the start", () => s.events.filter((e) => e.kind === "gpu" && e.sample.atMs >= startingAt).length >= 3);
    const samplesAfter = s.events.flatMap((e) => (e.kind === "gpu" && e.sample.atMs >= startingAt ? [e.sample] : []));
    expect(samplesAfter.length).toBeGreaterThan(0);
    expect(samplesAfter.filter((x) => x.gpus.some((g) => g.holders.some((h) => h.kind === "exited" && h.unit === KIMI)))).toEqual([]);
    const lastDraining = s.events
      .flatMap((e) => (e.kind === "gpu" && e.sample.gpus.some((g) => g.holders.some((h) => h.kind === "exited" && h.unit === KIMI)) ? [e.sample.atMs] : []))
      .at(-1)!;
    const started = s.events.find(
      (e) => e.kind === "transition" && e.transition.unit === KIMI && e.transition.to.activeState === "activating" && e.transition.atUsec / 1000 >= startingAt,
    );
    expect(started && started.kind === "transition" && started.transition.atUsec / 1000).toBeGreaterThan(lastDraining);
    // start-pre ran once and passed at once: no "still in use" line after the start
    const journal = await s.caller.units.journal({ name: KIMI, lines: 200 });
    expect(journal.filter((j) => j.atUsec / 1000 >= startingAt && /still in use/.test(j.message))).toEqual([]);
    // the stop/start jobs are actions of alice, with the operation id in the reason
    const actions = s.hub.recentActions().filter((a) => a.reason?.includes(r.operationId));
    expect(actions.map((a) => [a.action, a.user])).toEqual([["start", "alice"]]);
    expect((await s.caller.operations.get({ id: r.operationId })).steps.map((x) => x.step)).toEqual(["waiting-for-gpus", "starting", "started"]);
    expect((await s.caller.operations.list({ unit: KIMI }))[0]!.id).toBe(r.operationId);
  }, 30_000);

  it("a running unit is stopped first; steps stopping → waiting-for-gpus → starting → started; one at a time per unit", async () => {
    s = await setup();
    await kimiLoaded(s);
    const r = await gpuAware(s.caller.units.restart({ name: KIMI, waitForGpus: true }));
    await expect(s.caller.units.restart({ name: KIMI, waitForGpus: true })).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining(r.operationId),
    });
    const done = await until("the end", () => ended(s, r.operationId), 20_000);
    expect(done.step).toBe("started");
    expect(stepsOf(s, r.operationId)).toEqual(["stopping", "waiting-for-gpus", "starting", "started"]);
    const actions = s.hub.recentActions().filter((a) => a.reason?.includes(r.operationId));
    expect(actions.map((a) => a.action)).toEqual(["stop", "start"]);
  }, 30_000);

  it("refuses before the stop when a process outside the unit holds memory on its GPUs, naming it; an admin may SIGKILL it", async () => {
    s = await setup();
    await kimiLoaded(s);
    const squatter = s.host.world.spawn(["python3", "/home/bob/train.py"], null);
    s.host.world.allocate(squatter.pid, s.host.world.gpus[2]!.uuid, 2048);
    await until("the squatter in a sample", () => s.hub.gpuNow()?.gpus[2]!.holders.some((h) => h.pid === squatter.pid));
    const r = await gpuAware(s.caller.units.restart({ name: KIMI, waitForGpus: true }));
    expect(r.operation.step).toBe("failed");
    expect(r.operation.foreign).toEqual([
      {
        pid: squatter.pid,
        cmdline: ["python3", "/home/bob/train.py"],
        processName: "python3",
        unit: null,
        gpuUuid: s.host.world.gpus[2]!.uuid,
        gpuIndex: 2,
        usedMiB: 2048,
        startedAtMs: squatter.startedAtMs,
      },
    ]);
    expect(r.operation.message).toMatch(new RegExp(`PID ${squatter.pid} \\(outside any unit: python3 /home/bob/train.py\\) holds 2 GiB on GPU 2`));
    // nothing was stopped
    expect(s.hub.unit(KIMI)).toMatchObject({ activeState: "active" });
    // a reused PID is never killed; the right start time kills it
    await expect(s.caller.gpus.killHolder({ unit: KIMI, pid: squatter.pid, startedAtMs: squatter.startedAtMs + 5000 })).rejects.toMatchObject({
      code: "CONFLICT",
    });
    const killed = await s.caller.gpus.killHolder({ unit: KIMI, pid: squatter.pid, startedAtMs: squatter.startedAtMs });
    expect(killed).toMatchObject({ killed: true, pid: squatter.pid, unit: null, gpu: { index: 2 } });
    expect(s.host.world.isAlive(squatter.pid)).toBe(false);
    // Kimi's own process is not a "holder" to kill from here
    const own = s.hub.gpuNow()!.gpus[0]!.holders.find((h) => h.unit === KIMI)!;
    await expect(s.caller.gpus.killHolder({ unit: KIMI, pid: own.pid, startedAtMs: 0 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  }, 30_000);

  it("cancel while waiting leaves the unit stopped; a timeout says what is still held", async () => {
    s = await setup();
    await kimiLoaded(s);
    await s.caller.units.kill({ name: KIMI });
    await until("Kimi failed", () => s.hub.unit(KIMI)?.activeState === "failed");
    const a = await gpuAware(s.caller.units.restart({ name: KIMI, waitForGpus: true }));
    await until("waiting, with progress", () => opEvents(s, a.operationId).filter((o) => o.step === "waiting-for-gpus").length >= 2);
    const c = await s.caller.operations.cancel({ id: a.operationId });
    expect(c.id).toBe(a.operationId);
    const canceled = await until("canceled", () => ended(s, a.operationId));
    expect(canceled).toMatchObject({ step: "canceled" });
    expect(canceled.message).toMatch(
      /Canceled while waiting for its GPUs; .* still held\. vllm-kimi-k25\.service was left failed \(failed\) and not started\./,
    );
    // a timeout shorter than the drain
    const b = await gpuAware(s.caller.units.start({ name: KIMI, waitForGpus: true, timeoutMs: 1000 }));
    const timedOut = await until("timed out", () => ended(s, b.operationId), 5000);
    expect(timedOut.step).toBe("timed-out");
    expect(timedOut.timeoutSource).toBe("call");
    expect(timedOut.message).toMatch(
      /^Timed out after 1 s while waiting \(.* still held on GPUs 0–7 by exited PIDs .*\); .* still held\. vllm-kimi-k25\.service was left failed \(failed\) and not started\.$/,
    );
    expect(s.hub.unit(KIMI)!.activeState).toBe("failed");
    await expect(s.caller.operations.cancel({ id: `${s.hub.bootId}-o99` })).rejects.toMatchObject({ code: "NOT_FOUND" });
  }, 30_000);

  it("refuses waitForGpus on other actions and timeoutMs without it", async () => {
    s = await setup();
    await expect(s.caller.units.stop({ name: KIMI, waitForGpus: true })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringMatching(/start and restart only/),
    });
    await expect(s.caller.units.restart({ name: KIMI, timeoutMs: 5000 })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringMatching(/only with waitForGpus/),
    });
  });

  it("unified memory (GB10): the pool is on the sample; the restart waits for the processes and MemAvailable", async () => {
    s = await setup("spark");
    const unit = "vllm-spark-qwen.service";
    const sample = await until("the spark's unit on its GPU", () => {
      const g = s.hub.gpuNow();
      return g?.gpus[0]!.holders.some((h) => h.unit === unit) ? g : null;
    });
    expect(sample.gpus[0]).toMatchObject({ name: "NVIDIA GB10", memoryUsedMiB: null, memoryTotalMiB: null });
    expect(sample.memoryPool).toMatchObject({ totalMiB: 122_502, unified: true });
    expect(sample.memoryPool!.availableMiB).toBeLessThan(122_502 - 9_800 - 60_000);
    const r = await gpuAware(s.caller.units.restart({ name: unit, waitForGpus: true }));
    const done = await until("the end", () => ended(s, r.operationId), 20_000);
    expect(done.step).toBe("started");
    const waiting = opEvents(s, r.operationId).filter((o) => o.step === "waiting-for-gpus");
    expect(waiting.some((o) => o.pool !== null && o.pool.expectedFreeMiB > 60_000)).toBe(true);
    // it started only once MemAvailable was back
    const startingAt = opEvents(s, r.operationId).find((o) => o.step === "starting")!;
    expect(waiting.at(-1)!.pool!.availableMiB).toBeGreaterThanOrEqual(waiting.at(-1)!.pool!.availableBeforeMiB + waiting.at(-1)!.pool!.expectedFreeMiB - 256);
    expect(startingAt.atMs).toBeGreaterThanOrEqual(waiting.at(-1)!.atMs);
  }, 30_000);
});
