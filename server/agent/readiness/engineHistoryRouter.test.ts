/** units.engineHistory on a simulated host: TTFT and ITL p50/p95 from the simulated vLLM's histograms, load and tokens/s; bounded input. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createCallerFactory, type Context } from "../../trpc";
import { GpuAttributor } from "../gpu/attribution";
import { Hub } from "../hub/hub";
import { createAgentRouter } from "../router";
import { SampleHistory } from "../sampleHistory";
import { createSimulatedHost } from "../simulator/index";
import { EMPTY_READINESS_CONFIG } from "./config";
import { closeReadiness, startReadiness } from "./index";

const KIMI = "vllm-kimi-k25.service";
const FAST = { fastMs: 100, fastForMs: 60_000, slowMs: 200, servingMs: 200, timeoutMs: 500, firstMs: 50 };
const admin: Context = { actor: { user: "alice", role: "admin", unitPatterns: [] } };

describe("units.engineHistory", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it("answers rows with latency quantiles from the engine's histograms, at most `points`", async () => {
    const host = createSimulatedHost({ unitGlobs: ["vllm-*.service"], gpuIntervalMs: 100, timing: { speed: 5 } });
    const hub = new Hub(host, new GpuAttributor(host.procs), new SampleHistory());
    await hub.start();
    await startReadiness(hub, { config: EMPTY_READINESS_CONFIG, store: null, timing: FAST });
    const shutdown = new AbortController();
    cleanups.push(async () => {
      shutdown.abort();
      closeReadiness(hub);
      await hub.close();
    });
    const caller = createCallerFactory(createAgentRouter({ hub, unitGlobs: ["vllm-*.service"], shutdown: shutdown.signal }))(admin);
    await vi.waitFor(
      async () => {
        const rows = await caller.units.engineHistory({ name: KIMI, sinceMs: 0, points: 1000 });
        expect(rows.filter((r) => r.ttftP95Ms !== null).length).toBeGreaterThan(2);
      },
      { timeout: 10_000, interval: 200 },
    );
    const rows = await caller.units.engineHistory({ name: KIMI, sinceMs: 0, points: 1000 });
    const last = rows.filter((r) => r.ttftP95Ms !== null).at(-1)!;
    expect(last.ttftP50Ms!).toBeGreaterThan(0);
    expect(last.ttftP95Ms!).toBeGreaterThanOrEqual(last.ttftP50Ms!);
    expect(last.itlP95Ms!).toBeGreaterThanOrEqual(last.itlP50Ms!);
    expect(last.running).toEqual(expect.any(Number));
    expect(last.kvCacheUsage!).toBeGreaterThan(0);
    expect((await caller.units.engineHistory({ name: KIMI, sinceMs: 0, points: 2 })).length).toBeLessThanOrEqual(2);
    await expect(caller.units.engineHistory({ name: KIMI, sinceMs: 0, points: 5000 })).rejects.toThrow();
  });
});
