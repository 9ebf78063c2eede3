/** gpus.history and units.timeline with `points` on a simulated host: bucketed series with the simulator's telemetry; bounds enforced. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { decodeGpuHistory, isGpuHistorySeries, type DecodedGpu } from "../../contract/gpuHistory";
import { createCallerFactory, type Context } from "../../trpc";
import { GpuAttributor } from "../gpu/attribution";
import { Hub } from "../hub/hub";
import { createAgentRouter } from "../router";
import { SampleHistory } from "../sampleHistory";
import { createSimulatedHost } from "../simulator/index";

const admin: Context = { actor: { user: "alice", role: "admin", unitPatterns: [] } };
const UNIT = "vllm-kimi-k25.service";

async function setup() {
  const host = createSimulatedHost({ unitGlobs: ["vllm-*.service"], gpuIntervalMs: 50, timing: { speed: 20 } });
  const hub = new Hub(host, new GpuAttributor(host.procs), new SampleHistory());
  await hub.start();
  const shutdown = new AbortController();
  const caller = createCallerFactory(createAgentRouter({ hub, unitGlobs: ["vllm-*.service"], shutdown: shutdown.signal }))(admin);
  return { hub, shutdown, caller };
}

describe("history at the resolution drawn (simulated host)", () => {
  let s: Awaited<ReturnType<typeof setup>>;
  beforeEach(async () => {
    s = await setup();
  });
  afterEach(async () => {
    s.shutdown.abort();
    await s.hub.close();
  });

  it("gpus.history { points } answers at most that many buckets, with the simulator's power limit and SM clocks", async () => {
    await vi.waitFor(() => expect(s.hub.gpuHistory.since(0).length).toBeGreaterThan(30), { timeout: 10_000 });
    const reply = await s.caller.gpus.history({ sinceMs: 0, points: 10 });
    expect(isGpuHistorySeries(reply)).toBe(true);
    const samples = decodeGpuHistory(reply as Exclude<typeof reply, unknown[]>);
    expect(samples.length).toBeLessThanOrEqual(10);
    const g = samples.at(-1)!.gpus[0] as DecodedGpu;
    expect(g.powerLimitW).toBe(700);
    expect(g.smClockMaxMHz).toBe(1980);
    expect(g.smClockMHz).toEqual(expect.any(Number));
    // without points: samples, as before
    expect(Array.isArray(await s.caller.gpus.history({ sinceMs: 0 }))).toBe(true);
  });

  it("units.timeline { points } carries the GPU series; points are bounded", async () => {
    await vi.waitFor(() => expect(s.hub.gpuHistory.since(0).length).toBeGreaterThan(5), { timeout: 10_000 });
    const t = await s.caller.units.timeline({ name: UNIT, sinceMs: 0, points: 50 });
    expect(t.gpu?.format).toBe("buckets-v1");
    expect(decodeGpuHistory(t.gpu!).length).toBeLessThanOrEqual(50);
    expect((await s.caller.units.timeline({ name: UNIT, sinceMs: 0 })).gpu).toBeUndefined();
    await expect(s.caller.gpus.history({ sinceMs: 0, points: 4001 })).rejects.toThrow();
    await expect(s.caller.units.timeline({ name: UNIT, points: 0 })).rejects.toThrow();
  });
});
