import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { FAKE_NVIDIA_SMI_PATH, FakeNvidiaSmiStateFile, NVIDIA_SMI_ERRORS, fakeGpu, type FakeNvidiaSmiState } from "@/e2e/fakes/fakeNvidiaSmi";
import type { BackendStatus, GpuRawSample, GpuReading } from "../../contract/types";
import { createNvidiaSmiAdapter } from "./index";
import { NvidiaSmiSampler, RoundAssembler, type NvidiaSmiAdapterOptions } from "./sampler";

// ---------------------------------------------------------------------------------------
// RoundAssembler (pure)

function reading(uuid: string, used = 0): GpuReading {
  return {
    uuid,
    index: 0,
    name: "NVIDIA H200",
    pciBusId: "",
    memoryTotalMiB: 100,
    memoryUsedMiB: used,
    utilizationPct: null,
    temperatureC: null,
    powerW: null,
  };
}

describe("RoundAssembler", () => {
  it("first round ends on the quiet gap or a repeated uuid; later rounds as soon as the set is complete", () => {
    const a = new RoundAssembler();
    expect(a.push(reading("GPU-a"), 1)).toEqual([]);
    expect(a.push(reading("GPU-b"), 2)).toEqual([]);
    // next round begins: GPU-a repeats → the first round is complete
    const [r1] = a.push(reading("GPU-a", 5), 1000);
    expect(r1.atMs).toBe(1);
    expect(r1.gpus.map((g) => g.uuid)).toEqual(["GPU-a", "GPU-b"]);
    // the set is known now: the round completes with its last row, no waiting
    const [r2] = a.push(reading("GPU-b", 6), 1001);
    expect(r2.atMs).toBe(1000);
    expect(r2.gpus.map((g) => g.memoryUsedMiB)).toEqual([5, 6]);
    expect(a.pending()).toBe(0);
  });

  it("quiet gap flushes a partial set (a GPU vanished); a new GPU starts a new set", () => {
    const a = new RoundAssembler();
    a.push(reading("GPU-a"), 1);
    a.push(reading("GPU-b"), 1);
    expect(a.flush()?.gpus).toHaveLength(2);
    expect(a.push(reading("GPU-a"), 2)).toEqual([]);
    expect(a.flush()?.gpus.map((g) => g.uuid)).toEqual(["GPU-a"]);
    // expected set is now {a}: a single row completes a round
    expect(a.push(reading("GPU-a"), 3)).toHaveLength(1);
    expect(a.flush()).toBeNull();
  });

  it("reset forgets the GPU set", () => {
    const a = new RoundAssembler();
    a.push(reading("GPU-a"), 1);
    a.flush();
    a.reset();
    expect(a.push(reading("GPU-a"), 2)).toEqual([]);
    expect(a.pending()).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------
// Against the fake nvidia-smi

const INTERVAL = 300;

interface Harness {
  adapter: NvidiaSmiSampler;
  state: FakeNvidiaSmiStateFile;
  samples: (GpuRawSample & { receivedAtMs: number })[];
  statuses: BackendStatus[];
  logs: string[];
  startedPids(): number[];
  waitFor<T>(what: string, probe: () => T | undefined | null | false, timeoutMs?: number): Promise<T>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function harness(initial: FakeNvidiaSmiState, opts: Partial<NvidiaSmiAdapterOptions> = {}): Harness {
  const state = new FakeNvidiaSmiStateFile(initial);
  const samples: Harness["samples"] = [];
  const statuses: BackendStatus[] = [];
  const logs: string[] = [];
  const adapter = new NvidiaSmiSampler({
    nvidiaSmiPath: FAKE_NVIDIA_SMI_PATH,
    intervalMs: INTERVAL,
    backoffBaseMs: 100,
    backoffMaxMs: 400,
    startupTimeoutMs: 1500,
    env: state.env(),
    log: (m) => logs.push(m),
    ...opts,
  });
  cleanups.push(() => state.dispose());
  cleanups.push(() => adapter.close());
  adapter.start(
    (s) => samples.push({ ...s, receivedAtMs: Date.now() }),
    (s) => statuses.push(s),
  );
  return {
    adapter,
    state,
    samples,
    statuses,
    logs,
    startedPids: () =>
      logs.flatMap((l) => {
        const m = /^nvidia-smi: started pid (\d+)/.exec(l);
        return m ? [Number(m[1])] : [];
      }),
    async waitFor(what, probe, timeoutMs = 8000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const v = probe();
        if (v !== undefined && v !== null && v !== false) return v as never;
        if (Date.now() > deadline) {
          throw new Error(`timed out waiting for ${what}; statuses: ${JSON.stringify(statuses.map((s) => [s.state, s.message]))}; logs: ${logs.join(" | ")}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

function holder(): ChildProcess {
  const child = spawn("sleep", ["60"], { stdio: "ignore" });
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return child;
}

function pidAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/\) [ZX] /.test(stat);
  } catch {
    return false;
  }
}

/** Live fake processes running a compute-apps query against this state file. */
function appsQueriesRunning(statePath: string): number {
  let n = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      const env = readFileSync(`/proc/${entry}/environ`, "utf8");
      if (cmd.includes("--query-compute-apps") && env.includes(statePath) && pidAlive(Number(entry))) n++;
    } catch {
      // raced with exit
    }
  }
  return n;
}

describe("NvidiaSmiSampler with the fake nvidia-smi", () => {
  it("streams complete rounds from one long-lived process, with compute apps", async () => {
    const proc = holder();
    const gpus = [fakeGpu(0), fakeGpu(1, { cells: { "utilization.gpu": "[N/A]" } })];
    const h = harness({ gpus, allocations: [{ pid: proc.pid!, uuid: gpus[0].uuid, usedMiB: 4096, processName: "python3" }] });
    await h.waitFor("5 samples", () => h.samples.length >= 5);
    const last = h.samples[h.samples.length - 1];
    expect(last.gpus.map((g) => g.uuid)).toEqual([gpus[0].uuid, gpus[1].uuid]);
    expect(last.gpus[0]).toMatchObject({ memoryUsedMiB: 4096, memoryTotalMiB: 143771, index: 0, name: "NVIDIA H200" });
    expect(last.gpus[1].utilizationPct).toBeNull(); // [N/A] is no sample, not 0
    expect(last.gpus[1].memoryUsedMiB).toBe(0);
    await h.waitFor("apps in a sample", () => h.samples.some((s) => s.apps?.length));
    const withApps = h.samples.filter((s) => s.apps?.length).pop()!;
    expect(withApps.apps).toEqual([{ gpuUuid: gpus[0].uuid, pid: proc.pid, processName: "python3", usedMiB: 4096 }]);
    expect(h.adapter.status().state).toBe("ok");
    expect(h.adapter.status().message).toMatch(/^2 GPUs, every 300 ms/);
    // one process for the whole stream
    expect(h.startedPids()).toHaveLength(1);
    // rounds arrive about once per interval (not one per row, not bunched)
    const gaps = h.samples.slice(1).map((s, i) => s.receivedAtMs - h.samples[i].receivedAtMs);
    const meanGap = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    expect(meanGap).toBeGreaterThan(INTERVAL * 0.7);
    expect(meanGap).toBeLessThan(INTERVAL * 2);
    // the memory change is picked up without restarting anything
    h.state.update((s) => {
      s.allocations[0].usedMiB = 8192;
    });
    await h.waitFor("8192 MiB", () => h.samples.at(-1)!.gpus[0].memoryUsedMiB === 8192);
    expect(h.startedPids()).toHaveLength(1);
  });

  it("createNvidiaSmiAdapter returns a working GpuAdapter", async () => {
    const state = new FakeNvidiaSmiStateFile({ gpus: [fakeGpu(0)], allocations: [] });
    cleanups.push(() => state.dispose());
    const adapter = createNvidiaSmiAdapter({ nvidiaSmiPath: FAKE_NVIDIA_SMI_PATH, intervalMs: INTERVAL, env: state.env() });
    cleanups.push(() => adapter.close());
    const samples: GpuRawSample[] = [];
    adapter.start(
      (s) => samples.push(s),
      () => {},
    );
    expect(adapter.status().state).toBe("connecting");
    const deadline = Date.now() + 5000;
    while (samples.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(samples.length).toBeGreaterThanOrEqual(2);
    expect(adapter.status().state).toBe("ok");
  });

  it("hang → stale within 3 intervals, SIGKILL, restart; recovers when nvidia-smi answers again", async () => {
    const h = harness({ gpus: [fakeGpu(0)], allocations: [] });
    await h.waitFor("3 samples", () => h.samples.length >= 3);
    const [firstPid] = h.startedPids();
    h.state.update((s) => {
      s.mode = "hang";
    });
    const stale = await h.waitFor("stale", () => h.statuses.find((s) => s.state === "stale"));
    const lastSample = h.samples.at(-1)!.receivedAtMs;
    // watchdog: > 3 intervals without a round, checked every half interval
    expect(stale.sinceMs - lastSample).toBeGreaterThan(3 * INTERVAL);
    expect(stale.sinceMs - lastSample).toBeLessThanOrEqual(3.5 * INTERVAL + 300);
    await h.waitFor("hung process killed", () => !pidAlive(firstPid));
    expect(h.logs.some((l) => l.includes(`killed pid ${firstPid}`))).toBe(true);
    // restarted; the new one hangs too (driver still "wedged") and is killed after the startup allowance
    await h.waitFor("second restart", () => h.startedPids().length >= 3, 10000);
    const pids = h.startedPids();
    // never two loops at once
    expect(pids.slice(0, -1).every((p) => !pidAlive(p))).toBe(true);
    expect(h.adapter.status().state).toBe("stale");
    h.state.update((s) => {
      s.mode = "ok";
    });
    const before = h.samples.length;
    await h.waitFor("recovery", () => h.adapter.status().state === "ok" && h.samples.length >= before + 2, 10000);
  }, 30000);

  it("a consumer that throws does not stop the stream", async () => {
    const state = new FakeNvidiaSmiStateFile({ gpus: [fakeGpu(0)], allocations: [] });
    cleanups.push(() => state.dispose());
    const logs: string[] = [];
    let calls = 0;
    const adapter = createNvidiaSmiAdapter({ nvidiaSmiPath: FAKE_NVIDIA_SMI_PATH, intervalMs: INTERVAL, env: state.env(), log: (m) => logs.push(m) });
    cleanups.push(() => adapter.close());
    adapter.start(
      () => {
        calls++;
        throw new Error("consumer bug");
      },
      () => {
        throw new Error("status consumer bug");
      },
    );
    const deadline = Date.now() + 5000;
    while (calls < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBeGreaterThanOrEqual(3);
    expect(adapter.status().state).toBe("ok");
    expect(logs.some((l) => l.includes("sample consumer threw: consumer bug"))).toBe(true);
  });

  it("slow NVML start-up: connecting (with why), not killed before the start-up allowance", async () => {
    const h = harness({ gpus: [fakeGpu(0)], allocations: [], queryDelayMs: 1500 }, { startupTimeoutMs: 4000 });
    await h.waitFor("connecting message", () => h.statuses.find((s) => s.state === "connecting" && s.message.startsWith("waiting for the first sample")));
    await h.waitFor("first sample", () => h.samples.length >= 1, 6000);
    expect(h.startedPids()).toHaveLength(1);
    expect(h.statuses.some((s) => s.state === "stale" || s.state === "error")).toBe(false);
    expect(h.adapter.status().state).toBe("ok");
  });

  it("crash → error status with the exit code → restart → samples again", async () => {
    const h = harness({ gpus: [fakeGpu(0)], allocations: [], loopExitAfterRounds: 2, loopExitCode: 255 });
    await h.waitFor("error status", () => h.statuses.find((s) => s.state === "error"));
    const err = h.statuses.find((s) => s.state === "error")!;
    expect(err.message).toMatch(/exit code 255/);
    await h.waitFor("3 loops started", () => h.startedPids().length >= 3);
    // each loop delivered its rounds: samples kept coming across restarts
    expect(h.samples.length).toBeGreaterThanOrEqual(4);
    h.state.update((s) => {
      delete s.loopExitAfterRounds;
    });
    await h.waitFor("ok again", () => h.adapter.status().state === "ok");
  });

  it("missing binary → error status naming it, retried with capped backoff, no crash", async () => {
    const statuses: BackendStatus[] = [];
    const logs: string[] = [];
    const adapter = createNvidiaSmiAdapter({
      nvidiaSmiPath: "/nonexistent/nvidia-smi",
      intervalMs: 100,
      log: (m) => logs.push(m),
    });
    cleanups.push(() => adapter.close());
    adapter.start(
      () => {
        throw new Error("no sample expected");
      },
      (s) => statuses.push(s),
    );
    const deadline = Date.now() + 3000;
    while (!statuses.some((s) => s.state === "error") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(adapter.status()).toMatchObject({
      state: "error",
      message: "nvidia-smi not found (/nonexistent/nvidia-smi): binary missing",
    });
    expect(logs.some((l) => l.startsWith("nvidia-smi: restarting in 1.0 s"))).toBe(true);
  });

  it.each([
    ["noDevices", /no NVIDIA GPU found \(exit code 6\): No devices were found/],
    ["driverNotLoaded", /cannot talk to the NVIDIA driver.*\(exit code 9\)/],
    ["versionMismatch", /driver\/library version mismatch.*\(exit code 18\): Failed to initialize NVML/],
    ["fellOffTheBus", /\(exit code 15\): Unable to determine the device handle for GPU 0000:0B:00.0/],
  ] as const)("error text %s → error status with that message, then recovery", async (key, expected) => {
    const h = harness({ gpus: [fakeGpu(0)], allocations: [], mode: "error", error: NVIDIA_SMI_ERRORS[key] });
    const err = await h.waitFor("error", () => h.statuses.find((s) => s.state === "error"));
    expect(err.message).toMatch(expected);
    expect(h.samples).toHaveLength(0);
    h.state.update((s) => {
      s.mode = "ok";
    });
    await h.waitFor("ok", () => h.adapter.status().state === "ok" && h.samples.length > 0);
  });

  it("error text on stderr is read too", async () => {
    const h = harness({
      gpus: [fakeGpu(0)],
      allocations: [],
      mode: "error",
      error: { ...NVIDIA_SMI_ERRORS.versionMismatch, stream: "stderr" },
    });
    const err = await h.waitFor("error", () => h.statuses.find((s) => s.state === "error"));
    expect(err.message).toMatch(/Driver\/library version mismatch/);
  });

  it("a field the driver rejects is dropped, the rest keeps flowing", async () => {
    const h = harness({ gpus: [fakeGpu(0, { powerW: 300 })], allocations: [], rejectFields: ["power.draw"] });
    await h.waitFor("sample", () => h.samples.length >= 1);
    expect(h.samples[0].gpus[0].powerW).toBeNull();
    expect(h.samples[0].gpus[0].memoryTotalMiB).toBe(143771);
    expect(h.logs.some((l) => l.includes('does not know "power.draw"'))).toBe(true);
  });

  it("a lost GPU's error line and stray lines do not stop the others; the status says so", async () => {
    const h = harness({
      gpus: [fakeGpu(0), fakeGpu(1, { lost: true, pciBusId: "00000000:0B:00.0" })],
      allocations: [],
      strayLines: ["WARNING: something unrelated"],
    });
    await h.waitFor("3 samples", () => h.samples.length >= 3);
    expect(h.samples.at(-1)!.gpus.map((g) => g.index)).toEqual([0]);
    expect(h.adapter.status().state).toBe("ok");
    expect(h.adapter.status().message).toMatch(/Unable to determine the device handle for GPU 00000000:0B:00.0/);
  });

  it("GB10-style [N/A] memory arrives as null", async () => {
    const h = harness({
      gpus: [fakeGpu(0, { name: "NVIDIA GB10", cells: { "memory.total": "[N/A]", "memory.used": "[N/A]" } })],
      allocations: [],
    });
    await h.waitFor("sample", () => h.samples.length >= 1);
    expect(h.samples[0].gpus[0]).toMatchObject({ name: "NVIDIA GB10", memoryTotalMiB: null, memoryUsedMiB: null });
  });

  it("a hanging compute-apps query times out, never overlaps, and never blocks the GPU stream", async () => {
    const h = harness({ gpus: [fakeGpu(0)], allocations: [], appsMode: "hang" }, { appsTimeoutMs: 700 });
    let maxConcurrent = 0;
    const until = Date.now() + 2500;
    while (Date.now() < until) {
      maxConcurrent = Math.max(maxConcurrent, appsQueriesRunning(h.state.path));
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(maxConcurrent).toBe(1);
    expect(h.samples.length).toBeGreaterThanOrEqual(5);
    expect(h.samples.every((s) => s.apps === null)).toBe(true);
    expect(h.adapter.status()).toMatchObject({ state: "ok" });
    expect(h.adapter.status().message).toMatch(/compute apps unavailable: compute-apps query timed out after 0.7 s/);
    // and it recovers
    h.state.update((s) => {
      s.appsMode = "ok";
    });
    await h.waitFor("apps again", () => h.samples.at(-1)!.apps !== null);
  }, 15000);

  it("close() ends every child process", async () => {
    const h = harness({ gpus: [fakeGpu(0)], allocations: [], appsMode: "hang" }, { appsTimeoutMs: 60000 });
    await h.waitFor("sample", () => h.samples.length >= 1);
    await h.waitFor("apps query running", () => appsQueriesRunning(h.state.path) === 1);
    const [loopPid] = h.startedPids();
    await h.adapter.close();
    expect(pidAlive(loopPid)).toBe(false);
    expect(appsQueriesRunning(h.state.path)).toBe(0);
  });
});
