/** Compute apps asked for only when used memory moved (and every appsRefreshMs regardless), against the fake nvidia-smi. */
import { spawn, type ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { FAKE_NVIDIA_SMI_PATH, FakeNvidiaSmiStateFile, fakeGpu } from "../../../e2e/fakes/fakeNvidiaSmi";
import type { GpuRawSample } from "../../contract/types";
import { NvidiaSmiSampler } from "./sampler";

const INTERVAL = 200;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function holder(): ChildProcess {
  const child = spawn("sleep", ["60"], { stdio: "ignore" });
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return child;
}

async function waitFor(what: string, probe: () => boolean, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("telemetry lanes from the fake nvidia-smi", () => {
  it("utilization.memory, power.limit, clocks.sm, clocks.max.sm arrive; [N/A] is null, never 0", async () => {
    const gpus = [
      fakeGpu(0, { smClockMHz: 1410, smClockMaxMHz: 1980, powerLimitW: 600, utilizationMemoryPct: 37 }),
      fakeGpu(1, { powerW: null, powerLimitW: null, smClockMaxMHz: null, utilizationMemoryPct: null }),
    ];
    const state = new FakeNvidiaSmiStateFile({ gpus, allocations: [] });
    cleanups.push(() => state.dispose());
    const samples: GpuRawSample[] = [];
    const sampler = new NvidiaSmiSampler({ nvidiaSmiPath: FAKE_NVIDIA_SMI_PATH, intervalMs: INTERVAL, env: state.env() });
    cleanups.push(() => sampler.close());
    sampler.start(
      (s) => samples.push(s),
      () => {},
    );
    await waitFor("a sample", () => samples.length > 0);
    const [a, b] = samples[0]!.gpus;
    expect(a).toMatchObject({ smClockMHz: 1410, smClockMaxMHz: 1980, powerLimitW: 600, memoryUtilizationPct: 37, powerW: 75.5 });
    expect(b).toMatchObject({ smClockMHz: 1980, smClockMaxMHz: null, powerLimitW: null, memoryUtilizationPct: null, powerW: null });
  });
});

describe("compute apps on change", () => {
  it("steady memory: asked every appsRefreshMs, not every interval; a new holder is seen within a few intervals", async () => {
    const a = holder();
    const b = holder();
    const gpus = [fakeGpu(0), fakeGpu(1)];
    const state = new FakeNvidiaSmiStateFile({ gpus, allocations: [{ pid: a.pid!, uuid: gpus[0]!.uuid, usedMiB: 4096, processName: "python3" }] });
    cleanups.push(() => state.dispose());
    const samples: (GpuRawSample & { receivedAtMs: number })[] = [];
    const sampler = new NvidiaSmiSampler({ nvidiaSmiPath: FAKE_NVIDIA_SMI_PATH, intervalMs: INTERVAL, appsRefreshMs: 1500, env: state.env() });
    cleanups.push(() => sampler.close());
    sampler.start(
      (s) => samples.push({ ...s, receivedAtMs: Date.now() }),
      () => {},
    );
    await waitFor("apps", () => samples.some((s) => s.apps?.length === 1));
    const calls0 = sampler.appsCalls;
    const rounds0 = samples.length;
    await new Promise((r) => setTimeout(r, 3200));
    const rounds = samples.length - rounds0;
    const calls = sampler.appsCalls - calls0;
    // ~16 rounds in 3.2 s; the old way asked each one, now one per 1.5 s (2–3)
    expect(rounds).toBeGreaterThanOrEqual(8);
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(calls).toBeLessThanOrEqual(4);
    // the apps stay attached to every sample meanwhile (never null because they were not re-asked)
    expect(samples.slice(rounds0).every((s) => s.apps?.length === 1)).toBe(true);

    // a second process allocates: memory moves, so it is asked at once
    const changedAt = Date.now();
    state.update((s) => {
      s.allocations.push({ pid: b.pid!, uuid: gpus[1]!.uuid, usedMiB: 2048, processName: "python3" });
    });
    await waitFor("the new holder", () => samples.at(-1)!.apps?.length === 2);
    const seenAfterMs = samples.at(-1)!.receivedAtMs - changedAt;
    expect(seenAfterMs).toBeLessThan(1500); // before the periodic refresh could have found it
  });

  it("appsRefreshMs ≤ the interval asks every round (the old behaviour)", async () => {
    const state = new FakeNvidiaSmiStateFile({ gpus: [fakeGpu(0)], allocations: [] });
    cleanups.push(() => state.dispose());
    const sampler = new NvidiaSmiSampler({ nvidiaSmiPath: FAKE_NVIDIA_SMI_PATH, intervalMs: INTERVAL, appsRefreshMs: 0, env: state.env() });
    cleanups.push(() => sampler.close());
    let rounds = 0;
    sampler.start(
      () => rounds++,
      () => {},
    );
    // memory never moves, so only "every round" explains 7 asks soon: the default refresh (5 s)
    // would ask ~3 times in 15 s. Counted against time, not rounds: on a busy machine an ask can
    // outlast a round, and asks never overlap (seen in a loaded run: 10 rounds, 3 asks)
    await waitFor("7 asks for compute apps", () => sampler.appsCalls >= 7, 15_000);
    expect(rounds).toBeGreaterThan(0);
  }, 30_000);
});
