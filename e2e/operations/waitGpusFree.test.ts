/**
 * deploy/wait-gpus-free against the fake nvidia-smi, without systemd: its exit codes and what it
 * says (the sandbox suite runs it as a real ExecStartPre). Needs no root.
 */
import { execFile, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { FAKE_NVIDIA_SMI_PATH, FakeNvidiaSmiStateFile, fakeGpu, NVIDIA_SMI_ERRORS } from "../fakes/fakeNvidiaSmi";

const HELPER = fileURLToPath(new URL("../../deploy/wait-gpus-free", import.meta.url));

function run(state: FakeNvidiaSmiStateFile, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      "/bin/sh",
      [HELPER, ...args],
      { env: state.env({ NVIDIA_SMI: FAKE_NVIDIA_SMI_PATH, WAIT_GPUS_INTERVAL: "0.2" }), timeout: 20_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

function startTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
}

describe("wait-gpus-free", () => {
  let state: FakeNvidiaSmiStateFile | null = null;
  afterEach(() => state?.dispose());

  it("exit 0 at once when the GPUs run no compute process; others' GPUs do not count", async () => {
    state = new FakeNvidiaSmiStateFile({
      gpus: [fakeGpu(0), fakeGpu(1)],
      allocations: [{ pid: process.pid, uuid: fakeGpu(1).uuid, usedMiB: 100, startTicks: startTicks(process.pid) }],
    });
    const r = await run(state, ["0", "5"]);
    expect(r).toMatchObject({ code: 0, stdout: "wait-gpus-free: GPU(s) 0 run no compute process\n" });
  });

  it("exit 1 after the timeout, naming what still runs there", async () => {
    state = new FakeNvidiaSmiStateFile({
      gpus: [fakeGpu(0)],
      allocations: [{ pid: process.pid, uuid: fakeGpu(0).uuid, usedMiB: 100, startTicks: startTicks(process.pid), processName: "python3" }],
    });
    const r = await run(state, [fakeGpu(0).uuid, "2"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `wait-gpus-free: GPU(s) ${fakeGpu(0).uuid} still in use after 2 s by 1 process(es):\n  ${fakeGpu(0).uuid}, ${process.pid}, python3\n`,
    );
  });

  it("a killed holder listed until its memory is freed: waits for the release, then exit 0", async () => {
    const child = spawn("sleep", ["30"]);
    state = new FakeNvidiaSmiStateFile({
      gpus: [fakeGpu(0)],
      allocations: [{ pid: child.pid!, uuid: fakeGpu(0).uuid, usedMiB: 4000, startTicks: startTicks(child.pid!) }],
      releaseDelayMs: 1500,
      listExitedHolders: true,
    });
    const waiting = run(state, ["0", "10"]);
    await new Promise((r) => setTimeout(r, 500));
    child.kill("SIGKILL");
    const r = await waiting;
    const died = Object.values(state.deaths())[0]!;
    expect(r.code).toBe(0);
    expect(Date.now()).toBeGreaterThanOrEqual(died + 1500);
    expect(r.stdout.split("\n").filter((l) => /still running/.test(l)).length).toBeGreaterThanOrEqual(2);
  });

  it("exit 2 on bad arguments (never passed on), exit 3 when nvidia-smi fails", async () => {
    state = new FakeNvidiaSmiStateFile({ gpus: [fakeGpu(0)], allocations: [], mode: "error", error: NVIDIA_SMI_ERRORS.driverNotLoaded });
    for (const args of [[], ["-i"], ["0;rm -rf /"], ["0", "0"], ["0", "ten"], ["0", "99999999"]]) expect((await run(state, args)).code).toBe(2);
    const r = await run(state, ["0", "5"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^wait-gpus-free: nvidia-smi failed: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver/);
  });
});
