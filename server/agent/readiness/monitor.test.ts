import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentEvent } from "../../contract/events";
import type { ReadinessTransition } from "../../contract/readiness";
import { createCallerFactory, type Context } from "../../trpc";
import type { EngineHttpRequest } from "../adapter";
import { GpuAttributor } from "../gpu/attribution";
import { Hub } from "../hub/hub";
import { createAgentRouter } from "../router";
import { SampleHistory } from "../sampleHistory";
import { createSimulatedHost } from "../simulator/index";
import { EMPTY_READINESS_CONFIG } from "./config";
import { closeReadiness, startReadiness } from "./index";
import type { ReadinessStore } from "./timeline";

const KIMI = "vllm-kimi-k25.service";
const QWEN = "vllm-qwen-draft.service";
const FAST = { fastMs: 100, fastForMs: 60_000, slowMs: 200, servingMs: 300, timeoutMs: 500, firstMs: 50 };
const admin: Context = { actor: { user: "alice", role: "admin", unitPatterns: [] } };

function memoryStore(): ReadinessStore & { rows: ReadinessTransition[] } {
  const rows: ReadinessTransition[] = [];
  return {
    file: "(memory)",
    rows,
    addReadinessTransition: (t) => void rows.push(t),
    loadReadinessTransitions: () => {
      const out = new Map<string, ReadinessTransition[]>();
      for (const t of rows) out.set(t.unit, [...(out.get(t.unit) ?? []), t]);
      return out;
    },
  };
}

async function setup(store: ReadinessStore | null = null, speed = 5) {
  const host = createSimulatedHost({ unitGlobs: ["vllm-*.service"], gpuIntervalMs: 100, timing: { speed } });
  // count probes per unit: none may go to a unit that is not running
  const asked: { unit: string; atMs: number }[] = [];
  const engines = host.engines!;
  host.engines = { get: (req: EngineHttpRequest) => (asked.push({ unit: req.unit, atMs: Date.now() }), engines.get(req)) };
  const hub = new Hub(host, new GpuAttributor(host.procs), new SampleHistory());
  await hub.start();
  const events: AgentEvent[] = [];
  hub.subscribe((e) => events.push(e.event));
  const monitor = await startReadiness(hub, { config: EMPTY_READINESS_CONFIG, store, timing: FAST });
  const shutdown = new AbortController();
  const caller = createCallerFactory(createAgentRouter({ hub, unitGlobs: ["vllm-*.service"], shutdown: shutdown.signal }))(admin);
  const readinessEvents = (unit: string) => events.flatMap((e) => (e.kind === "readiness" && e.unit === unit ? [e.readiness] : []));
  return {
    host,
    hub,
    monitor,
    caller,
    asked,
    readinessEvents,
    async close() {
      shutdown.abort();
      closeReadiness(hub);
      await hub.close();
    },
  };
}

let s: Awaited<ReturnType<typeof setup>> | null = null;
afterEach(async () => {
  await s?.close();
  s = null;
});

describe("readiness on the simulated host", () => {
  it("a unit serving before the agent started is probed and serving, on units.list and units.get, with its models and engine metrics", async () => {
    s = await setup();
    await vi.waitFor(() => expect(s!.hub.unit(KIMI)?.readiness?.state).toBe("serving"), { timeout: 3000 });
    const listed = (await s.caller.units.list()).units.find((u) => u.name === KIMI)!;
    expect(listed.readiness).toMatchObject({
      state: "serving",
      engine: "vllm",
      models: ["/models/kimi-k2.5"],
      probe: { ok: true, status: 200, url: "http://127.0.0.1:8000/health" },
    });
    await vi.waitFor(async () => expect((await s!.caller.units.get({ name: KIMI })).engine?.requestsRunning).toBeGreaterThan(0), { timeout: 3000 });
    const detail = await s.caller.units.get({ name: KIMI });
    expect(detail.readiness?.state).toBe("serving");
    expect(detail.engine).toMatchObject({ kvCacheUsage: expect.any(Number) });
    // a unit that failed in ExecStartPre runs no engine: unknown, and never probed
    expect(s.hub.unit("vllm-llama-70b.service")?.readiness).toMatchObject({ state: "unknown", engine: "vllm" });
    expect(s.asked.filter((a) => a.unit === "vllm-llama-70b.service")).toEqual([]);
  });

  it("a restart: unknown while stopped and in start-pre, then loading with the stages and shard progress from the log, then serving", async () => {
    s = await setup();
    await vi.waitFor(() => expect(s!.hub.unit(KIMI)?.readiness?.state).toBe("serving"), { timeout: 3000 });
    const mark = s.readinessEvents(KIMI).length;
    await s.caller.units.restart({ name: KIMI });
    await vi.waitFor(() => expect(s!.readinessEvents(KIMI).slice(mark).at(-1)?.state).toBe("serving"), { timeout: 15_000, interval: 100 });
    const seen = s.readinessEvents(KIMI).slice(mark);
    const states = dedupe(seen.map((r) => r.state));
    expect(states).toEqual(["unknown", "loading", "serving"]);
    const stages = dedupe(seen.filter((r) => r.state === "loading").map((r) => r.stage));
    expect(stages).toEqual([
      "starting",
      "loading weights",
      "weights loaded",
      "compiling (torch.compile)",
      "compiled (torch.compile)",
      "allocating KV cache",
      "capturing CUDA graphs",
      "CUDA graphs captured",
      "starting API server",
    ]);
    expect(seen.some((r) => r.progress?.total === 119 && r.progress.done > 0)).toBe(true);
    const served = seen.at(-1)!;
    expect(served.timings?.map((t) => t.stage)).toEqual(["loading weights", "loading the model", "torch.compile", "capturing CUDA graphs", "engine init"]);
    // the timeline's readiness lane, on units.timeline
    const lane = (await s.caller.units.timeline({ name: KIMI })).readiness;
    expect(lane.map((t) => t.to.state)).toEqual(expect.arrayContaining(["serving", "unknown", "loading"]));
    expect(lane.at(-1)?.to).toEqual({ state: "serving", stage: null });
  }, 30_000);

  it("ready-in estimate: the second start carries estimatedReadyAtMs from the first (stage-aware), the first none", async () => {
    s = await setup();
    await vi.waitFor(() => expect(s!.hub.unit(KIMI)?.readiness?.state).toBe("serving"), { timeout: 3000 });
    const restartOnce = async () => {
      const mark = s!.readinessEvents(KIMI).length;
      await s!.caller.units.restart({ name: KIMI });
      await vi.waitFor(() => expect(s!.readinessEvents(KIMI).slice(mark).at(-1)?.state).toBe("serving"), { timeout: 15_000, interval: 100 });
      return s!
        .readinessEvents(KIMI)
        .slice(mark)
        .filter((r) => r.state === "loading");
    };
    // found serving at start: no start recorded yet, so no estimate on the first restart
    expect((await restartOnce()).some((r) => r.estimatedReadyAtMs !== undefined)).toBe(false);
    const lane = (await s.caller.units.timeline({ name: KIMI })).readiness;
    const first = lane.filter((t) => t.to.state === "loading" && t.to.stage === "capturing CUDA graphs").at(-1)!;
    const servedAt = lane.at(-1)!.atMs;
    const second = await restartOnce();
    const graphs = second.find((r) => r.stage === "capturing CUDA graphs" && r.estimatedReadyAtMs !== undefined)!;
    // one start to go by: from this stage to serving took what it took the first time
    expect(graphs.estimatedReadyAtMs).toBe(graphs.stageSinceMs! + (servedAt - first.atMs));
    expect(second.every((r) => r.estimatedReadyAtMs !== undefined)).toBe(true);
    // on units.get too, while loading only
    expect((await s.caller.units.get({ name: KIMI })).readiness?.estimatedReadyAtMs).toBeUndefined();
  }, 40_000);

  it("no probe while the unit is stopped", async () => {
    s = await setup();
    await vi.waitFor(() => expect(s!.hub.unit(KIMI)?.readiness?.state).toBe("serving"), { timeout: 3000 });
    await s.caller.units.stop({ name: KIMI });
    await vi.waitFor(() => expect(s!.hub.unit(KIMI)?.activeState).toBe("inactive"), { timeout: 5000 });
    expect(s.hub.unit(KIMI)?.readiness).toMatchObject({ state: "unknown", probe: null });
    const stoppedAt = Date.now();
    await new Promise((r) => setTimeout(r, 1000)); // ten probe intervals
    expect(s.asked.filter((a) => a.unit === KIMI && a.atMs > stoppedAt)).toEqual([]);
  });

  it("the crash-looping unit fails in the engine's own words", async () => {
    s = await setup(null, 10);
    // the unit's end comes over D-Bus before journald has the error: "exited … without an error" first, then the engine's words
    const inWords = (r: { state: string; reason: string | null }) => r.state === "failed" && /^CUDA out of memory/.test(r.reason ?? "");
    await vi.waitFor(() => expect(s!.readinessEvents(QWEN).some(inWords)).toBe(true), { timeout: 10_000 });
    const failed = s.readinessEvents(QWEN).find(inWords)!;
    expect(failed).toMatchObject({
      stage: "allocating KV cache",
      reason: expect.stringMatching(/^CUDA out of memory while allocating the KV cache on GPU \d+$/),
    });
    expect(failed.line?.text).toMatch(/torch\.OutOfMemoryError: CUDA out of memory/);
  });

  it("transitions go to the store and come back in a new agent", async () => {
    const store = memoryStore();
    s = await setup(store);
    await vi.waitFor(() => expect(store.rows.some((t) => t.unit === KIMI && t.to.state === "serving")).toBe(true), { timeout: 3000 });
    await s.close();
    const before = store.rows.filter((t) => t.unit === KIMI);
    s = await setup(store);
    expect(s.monitor.timeline(KIMI).slice(0, before.length)).toEqual(before);
  });
});

function dedupe<T>(xs: T[]): T[] {
  return xs.filter((x, i) => i === 0 || x !== xs[i - 1]);
}
