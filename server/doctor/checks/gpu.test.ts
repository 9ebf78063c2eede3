/** The GPU checks against the fake nvidia-smi (e2e/fakes), run for real: each fails and passes. */
import { afterEach, describe, expect, it } from "vitest";
import { FAKE_NVIDIA_SMI_PATH, FakeNvidiaSmiStateFile, NVIDIA_SMI_ERRORS, fakeGpu, type FakeGpu, type FakeNvidiaSmiState } from "@/e2e/fakes/fakeNvidiaSmi";
import { systemRunner } from "../system";
import type { Runner } from "../types";
import { checkNvidiaSmi, checkPersistenceMode } from "./gpu";

let state: FakeNvidiaSmiStateFile | null = null;
afterEach(() => state?.dispose());

function fake(s: Partial<FakeNvidiaSmiState>): Runner {
  state = new FakeNvidiaSmiStateFile({ gpus: [fakeGpu(0), fakeGpu(1)], allocations: [], ...s });
  const env = state.env() as Record<string, string>;
  return { run: (file, args, opts) => systemRunner.run(file, args, { ...opts, env }) };
}

const limits = { timeoutMs: 3000, slowMs: 2000 };

describe("nvidia-smi", () => {
  it("passes: it runs, lists the GPUs and says how long one sample took", async () => {
    const { result, ran } = await checkNvidiaSmi(fake({}), FAKE_NVIDIA_SMI_PATH, limits);
    expect(ran).toBe(true);
    expect(result).toMatchObject({ id: "nvidia-smi", status: "ok" });
    expect(result.detail).toMatch(/^2 GPUs; one sample took \d+ ms$/);
  });

  it("fails: not installed", async () => {
    const { result, ran } = await checkNvidiaSmi(fake({}), "/nonexistent/nvidia-smi", limits);
    expect(ran).toBe(false);
    expect(result.status).toBe("error");
    expect(result.detail).toMatch(/^\/nonexistent\/nvidia-smi cannot be run: ENOENT/);
    expect(result.fix).toContain("GPUDECK_NVIDIA_SMI");
  });

  it("fails: the driver is not loaded (exit code explained)", async () => {
    const { result } = await checkNvidiaSmi(fake({ mode: "error", error: NVIDIA_SMI_ERRORS.driverNotLoaded }), FAKE_NVIDIA_SMI_PATH, limits);
    expect(result.status).toBe("error");
    expect(result.detail).toContain("exited 9 (the NVIDIA driver is not loaded): NVIDIA-SMI has failed");
  });

  it("fails: it hangs (killed after the timeout)", async () => {
    const t0 = Date.now();
    const { result } = await checkNvidiaSmi(fake({ mode: "hang" }), FAKE_NVIDIA_SMI_PATH, { timeoutMs: 800, slowMs: 2000 });
    expect(result.status).toBe("error");
    expect(result.detail).toContain("did not answer within 0.8 s");
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it("warns: one sample is slower than the limit", async () => {
    const { result } = await checkNvidiaSmi(fake({ queryDelayMs: 400 }), FAKE_NVIDIA_SMI_PATH, { timeoutMs: 3000, slowMs: 300 });
    expect(result.status).toBe("warn");
    expect(result.detail).toMatch(/^2 GPUs, but one sample took \d+ ms/);
  });
});

describe("persistence mode", () => {
  const off = (i: number): FakeGpu => Object.assign(fakeGpu(i), { persistenceMode: false });

  it("passes: on for every GPU", async () => {
    expect(await checkPersistenceMode(fake({}), FAKE_NVIDIA_SMI_PATH, limits)).toEqual({ id: "persistence mode", status: "ok", detail: "on for every GPU" });
  });

  it("warns: off on some GPUs, naming them and why it matters", async () => {
    const r = await checkPersistenceMode(fake({ gpus: [fakeGpu(0), off(1), off(2)] }), FAKE_NVIDIA_SMI_PATH, limits);
    expect(r.status).toBe("warn");
    expect(r.detail).toMatch(/^off on GPU 1, 2: each nvidia-smi call and each engine start/);
    expect(r.fix).toContain("nvidia-persistenced");
  });

  it("warns when it cannot tell (the field is not known)", async () => {
    const r = await checkPersistenceMode(fake({ rejectFields: ["persistence_mode"] }), FAKE_NVIDIA_SMI_PATH, limits);
    expect(r.status).toBe("warn");
    expect(r.detail).toContain("cannot tell");
  });
});
