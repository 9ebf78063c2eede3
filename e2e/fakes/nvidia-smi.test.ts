/**
 * Tests of the fake nvidia-smi itself: that it prints what the real binary prints for the
 * flags gpudeck uses, and that its state file, deaths and release delay behave.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { parseComputeAppsCsv, parseGpuCsv } from "../../server/agent/gpu/csv";
import { FAKE_NVIDIA_SMI_PATH, FakeNvidiaSmiStateFile, NVIDIA_SMI_ERRORS, fakeGpu, type FakeNvidiaSmiState } from "./fakeNvidiaSmi";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

function stateFile(s: FakeNvidiaSmiState): FakeNvidiaSmiStateFile {
  const f = new FakeNvidiaSmiStateFile(s);
  cleanups.push(() => f.dispose());
  return f;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** How long --fake-alloc waits for a live lock owner in these tests (FAKE_NVIDIA_SMI_LOCK_WAIT_MS). */
const LOCK_WAIT_MS = 1500;

function run(f: FakeNvidiaSmiStateFile, args: string[], timeoutMs = 5000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      FAKE_NVIDIA_SMI_PATH,
      args,
      { env: f.env({ FAKE_NVIDIA_SMI_LOCK_WAIT_MS: String(LOCK_WAIT_MS) }), timeout: timeoutMs, killSignal: "SIGKILL" },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function track(child: ChildProcess): ChildProcess {
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return child;
}

const QUERY = "--query-gpu=index,uuid,name,pci.bus_id,memory.total,memory.used,utilization.gpu,temperature.gpu,power.draw";
const APPS = "--query-compute-apps=gpu_uuid,pid,process_name,used_memory";

describe("fake nvidia-smi: output formats", () => {
  it("csv,nounits: header with units, rows without; parses back to the state", async () => {
    const gpus = [fakeGpu(0, { powerW: 69.5 }), fakeGpu(1, { cells: { "utilization.gpu": "[N/A]" } })];
    const f = stateFile({ gpus, allocations: [{ pid: process.pid, uuid: gpus[0].uuid, usedMiB: 1234 }] });
    const r = await run(f, [QUERY, "--format=csv,nounits"]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("index, uuid, name, pci.bus_id, memory.total [MiB], memory.used [MiB], utilization.gpu [%], temperature.gpu, power.draw [W]");
    expect(lines[1]).toBe(`0, ${gpus[0].uuid}, NVIDIA H200, 00000000:18:00.0, 143771, 1234, 0, 30, 69.50`);
    expect(lines[2]).toContain(", [N/A], ");
    const parsed = parseGpuCsv(r.stdout);
    expect(parsed.strayLines).toEqual([]);
    expect(parsed.gpus.map((g) => [g.uuid, g.memoryUsedMiB, g.utilizationPct])).toEqual([
      [gpus[0].uuid, 1234, 0],
      [gpus[1].uuid, 0, null],
    ]);
  });

  it("csv with units, noheader, aliases printed under canonical names", async () => {
    const f = stateFile({ gpus: [fakeGpu(0)], allocations: [] });
    const withUnits = await run(f, ["--query-gpu=gpu_uuid,gpu_name,gpu_bus_id,memory.total,utilization.gpu,power.draw", "--format=csv"]);
    expect(withUnits.stdout).toBe(
      `uuid, name, pci.bus_id, memory.total [MiB], utilization.gpu [%], power.draw [W]\n${fakeGpu(0).uuid}, NVIDIA H200, 00000000:18:00.0, 143771 MiB, 0 %, 75.50 W\n`,
    );
    const noheader = await run(f, ["--query-gpu=memory.used,memory.total", "--format=csv,noheader,nounits"]);
    expect(noheader.stdout).toBe("0, 143771\n");
    const apps = await run(f, ["--query-compute-apps=pid,used_memory", "--format=csv"]);
    expect(apps.stdout).toBe("pid, used_gpu_memory [MiB]\n"); // no processes: header only
  });

  it("-L lists GPUs and MIG devices; -i selects GPUs", async () => {
    const gpus = [fakeGpu(0, { mig: [{ profile: "3g.71gb", uuid: "MIG-0a1b2c3d-0000-1111-2222-333344445555" }] }), fakeGpu(1)];
    const f = stateFile({ gpus, allocations: [] });
    expect((await run(f, ["-L"])).stdout).toBe(
      `GPU 0: NVIDIA H200 (UUID: ${gpus[0].uuid})\n  MIG 3g.71gb     Device  0: (UUID: MIG-0a1b2c3d-0000-1111-2222-333344445555)\nGPU 1: NVIDIA H200 (UUID: ${gpus[1].uuid})\n`,
    );
    expect((await run(f, ["-i", "1", "--query-gpu=index", "--format=csv,noheader"])).stdout).toBe("1\n");
    expect((await run(f, [`--id=${gpus[0].uuid}`, "--query-gpu=index", "--format=csv,noheader"])).stdout).toBe("0\n");
  });

  it("rejects unknown fields and bad arguments like the real one", async () => {
    const f = stateFile({ gpus: [fakeGpu(0)], allocations: [], rejectFields: ["power.draw"] });
    const bad = await run(f, ["--query-gpu=uuid,bogus.field", "--format=csv"]);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('Field "bogus.field" is not a valid field to query.\n');
    const rejected = await run(f, ["--query-gpu=uuid,power.draw", "--format=csv"]);
    expect(rejected.code).toBe(2);
    expect(rejected.stdout).toContain('Field "power.draw" is not a valid field to query.');
    expect((await run(f, ["--query-gpu=uuid", "--format=json"])).code).toBe(2);
    expect((await run(f, ["--frobnicate"])).code).toBe(2);
  });

  it("no GPUs → 'No devices were found', exit 6; missing state file → exit 255", async () => {
    const f = stateFile({ gpus: [], allocations: [] });
    const r = await run(f, [QUERY, "--format=csv"]);
    expect(r).toMatchObject({ code: 6, stdout: "No devices were found\n" });
    const missing = await new Promise<Run>((resolve) =>
      execFile(FAKE_NVIDIA_SMI_PATH, ["-L"], { env: { ...process.env, FAKE_NVIDIA_SMI_STATE: `${f.dir}/nope.json` } }, (err, stdout, stderr) =>
        resolve({ code: err && typeof err.code === "number" ? err.code : 0, stdout, stderr }),
      ),
    );
    expect(missing.code).toBe(255);
    expect(missing.stdout).toContain("cannot read state");
  });

  it("a lost GPU prints the device-handle error in place of its row; one-shot exits 15", async () => {
    const f = stateFile({ gpus: [fakeGpu(0), fakeGpu(1, { lost: true, pciBusId: "00000000:0B:00.0" })], allocations: [] });
    const r = await run(f, ["--query-gpu=index,uuid", "--format=csv,nounits"]);
    expect(r.code).toBe(15);
    expect(r.stdout.split("\n")[2]).toBe("Unable to determine the device handle for GPU 00000000:0B:00.0: Unknown Error");
  });
});

describe("fake nvidia-smi: modes", () => {
  it.each(Object.entries(NVIDIA_SMI_ERRORS))("error mode %s: message and exit code", async (_name, error) => {
    const f = stateFile({ gpus: [fakeGpu(0)], allocations: [], mode: "error", error });
    const r = await run(f, [QUERY, "--format=csv,nounits"]);
    expect(r.code).toBe(error.exitCode);
    expect(r.stdout.trim()).toBe(error.message.trim());
    // the compute-apps query fails the same way unless appsMode says otherwise
    expect((await run(f, [APPS, "--format=csv"])).code).toBe(error.exitCode);
  });

  it("error on stderr; appsMode independent of mode", async () => {
    const f = stateFile({
      gpus: [fakeGpu(0)],
      allocations: [],
      mode: "error",
      error: { ...NVIDIA_SMI_ERRORS.versionMismatch, stream: "stderr" },
      appsMode: "ok",
    });
    const r = await run(f, [QUERY, "--format=csv"]);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("Driver/library version mismatch");
    expect((await run(f, [APPS, "--format=csv"])).code).toBe(0);
  });

  it("hang mode: no output, SIGTERM ignored, SIGKILL ends it", async () => {
    const f = stateFile({ gpus: [fakeGpu(0)], allocations: [], mode: "hang" });
    const child = track(spawn(FAKE_NVIDIA_SMI_PATH, [QUERY, "--format=csv"], { env: f.env() }));
    let output = "";
    child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    await new Promise((r) => setTimeout(r, 600));
    child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    expect(child.exitCode).toBeNull();
    expect(child.signalCode).toBeNull();
    expect(output).toBe("");
    const exited = new Promise((r) => child.once("exit", (_code, signal) => r(signal)));
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
  });

  it("-lms: header once, then one round per period; re-reads state; hangs mid-stream on request", async () => {
    const f = stateFile({ gpus: [fakeGpu(0), fakeGpu(1)], allocations: [] });
    const child = track(spawn(FAKE_NVIDIA_SMI_PATH, ["--query-gpu=uuid,memory.used", "--format=csv,nounits", "-lms", "200"], { env: f.env() }));
    let output = "";
    child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    await new Promise((r) => setTimeout(r, 1100));
    f.update((s) => {
      s.gpus[1].baseUsedMiB = 777;
    });
    await new Promise((r) => setTimeout(r, 700));
    f.update((s) => {
      s.mode = "hang";
    });
    await new Promise((r) => setTimeout(r, 400));
    const frozen = output;
    await new Promise((r) => setTimeout(r, 600));
    expect(output).toBe(frozen); // nothing more once hung
    const lines = output.trimEnd().split("\n");
    expect(lines.filter((l) => l.startsWith("uuid"))).toHaveLength(1);
    expect(lines[0]).toBe("uuid, memory.used [MiB]");
    const rows = lines.slice(1);
    expect(rows.length % 2).toBe(0);
    const rounds = rows.length / 2;
    // ~2 s at 200 ms minus start-up: between 5 and 11 rounds
    expect(rounds).toBeGreaterThanOrEqual(5);
    expect(rounds).toBeLessThanOrEqual(11);
    expect(rows.at(-1)).toBe(`${fakeGpu(1).uuid}, 777`);
    expect(child.exitCode).toBeNull();
  });

  it("-l <seconds> loops too, and loopExitAfterRounds ends it with the exit code", async () => {
    const f = stateFile({ gpus: [fakeGpu(0)], allocations: [], loopExitAfterRounds: 2, loopExitCode: 3 });
    const r = await run(f, ["--query-gpu=index", "--format=csv,noheader", "-l", "1"]);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe("0\n0\n");
  });
});

describe("fake nvidia-smi: allocations, deaths, release delay", () => {
  function procStartTicks(pid: number): number {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
  }

  it("--fake-alloc from the holder itself; memory released only releaseDelayMs after it dies", async () => {
    const gpus = [fakeGpu(0, { baseUsedMiB: 5 })];
    const f = stateFile({ gpus, allocations: [], releaseDelayMs: 1500 });
    // what a unit's ExecStart does: register its own pid, then exec the server
    const holder = track(
      spawn("sh", ["-c", `"$0" --fake-alloc $$ 0 4000 && exec sleep 60`, FAKE_NVIDIA_SMI_PATH], {
        env: f.env(),
        stdio: "ignore",
      }),
    );
    const deadline = Date.now() + 5000;
    while (f.read().allocations.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    const [alloc] = f.read().allocations;
    expect(alloc).toMatchObject({ pid: holder.pid, uuid: gpus[0].uuid, usedMiB: 4000 });
    expect(alloc.startTicks).toBe(procStartTicks(holder.pid!));

    // after exec, the process name is what the process now runs
    await new Promise((r) => setTimeout(r, 200));
    const apps = parseComputeAppsCsv((await run(f, [APPS, "--format=csv,nounits"])).stdout).apps;
    expect(apps).toEqual([{ gpuUuid: gpus[0].uuid, pid: holder.pid, processName: "sleep", usedMiB: 4000 }]);
    expect(parseGpuCsv((await run(f, [QUERY, "--format=csv,nounits"])).stdout).gpus[0].memoryUsedMiB).toBe(4005);

    const killedAt = Date.now();
    holder.kill("SIGKILL");
    await new Promise((r) => holder.once("exit", r));

    // draining: memory still used, the dead pid no longer listed
    const during = parseGpuCsv((await run(f, [QUERY, "--format=csv,nounits"])).stdout).gpus[0];
    expect(during.memoryUsedMiB).toBe(4005);
    expect(parseComputeAppsCsv((await run(f, [APPS, "--format=csv,nounits"])).stdout).apps).toEqual([]);
    const deaths = f.deaths();
    expect(Object.keys(deaths)).toEqual([`${holder.pid}@${alloc.startTicks}`]);
    expect(Object.values(deaths)[0]).toBeGreaterThanOrEqual(killedAt);

    // with listExitedHolders the draining pid stays listed, with [Not Found] as its name
    f.update((s) => {
      s.listExitedHolders = true;
    });
    expect((await run(f, [APPS, "--format=csv,nounits"])).stdout).toContain(`, ${holder.pid}, [Not Found], 4000`);

    // released after the delay
    while (Date.now() - Object.values(deaths)[0] < 1600) await new Promise((r) => setTimeout(r, 50));
    expect(parseGpuCsv((await run(f, [QUERY, "--format=csv,nounits"])).stdout).gpus[0].memoryUsedMiB).toBe(5);
    expect(parseComputeAppsCsv((await run(f, [APPS, "--format=csv,nounits"])).stdout).apps).toEqual([]);
  });

  it("a reused pid (other start time) does not keep the old allocation alive", async () => {
    const gpus = [fakeGpu(0)];
    const f = stateFile({
      gpus,
      allocations: [{ pid: process.pid, uuid: gpus[0].uuid, usedMiB: 100, startTicks: procStartTicks(process.pid) + 1 }],
    });
    const r = parseGpuCsv((await run(f, [QUERY, "--format=csv,nounits"])).stdout);
    expect(r.gpus[0].memoryUsedMiB).toBe(0);
  });

  it("--fake-free removes a pid's allocations; concurrent --fake-alloc calls are all kept", async () => {
    const gpus = [fakeGpu(0), fakeGpu(1)];
    const f = stateFile({ gpus, allocations: [] });
    await Promise.all([1, 2, 3, 4].map((i) => run(f, ["--fake-alloc", String(process.pid + i * 100000), String(i % 2), "10", `p${i}`])));
    expect(
      f
        .read()
        .allocations.map((a) => a.processName)
        .sort(),
    ).toEqual(["p1", "p2", "p3", "p4"]);
    await run(f, ["--fake-free", String(process.pid + 100000)]);
    expect(f.read().allocations).toHaveLength(3);
    expect((await run(f, ["--fake-alloc", "1", "GPU-nope", "10"])).code).not.toBe(0);
  });
});

describe("fake nvidia-smi: the state lock", () => {
  /** What the agent does to a compute-apps call that overruns its timeout: SIGKILL. */
  function runKilledAfter(f: FakeNvidiaSmiStateFile, args: string[], killAfterMs: number): Promise<{ pid: number; signal: string | null }> {
    return new Promise((resolve) => {
      const child = execFile(FAKE_NVIDIA_SMI_PATH, args, { env: f.env(), timeout: killAfterMs, killSignal: "SIGKILL" }, (err) => {
        resolve({ pid: child.pid!, signal: err && "signal" in err ? (err.signal as string | null) : null });
      });
    });
  }

  const lockPath = (f: FakeNvidiaSmiStateFile) => `${f.path}.lock`;
  const lockOwner = (f: FakeNvidiaSmiStateFile) => JSON.parse(readFileSync(lockPath(f), "utf8")) as { pid: number };

  async function waitForLock(f: FakeNvidiaSmiStateFile, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!existsSync(lockPath(f))) {
      if (Date.now() > deadline) throw new Error(`no lock at ${lockPath(f)} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it("a compute-apps call killed while it holds the lock does not block --fake-alloc", async () => {
    const gpus = [fakeGpu(0)];
    // a dead holder: the query records its death in the sidecar, under the lock, and lingers there
    const f = stateFile({ gpus, allocations: [{ pid: 999_999_999, uuid: gpus[0].uuid, usedMiB: 100 }], lockHoldMs: 60_000 });
    const killed = runKilledAfter(f, [APPS, "--format=csv,nounits"], 60_000);
    await waitForLock(f);
    const owner = lockOwner(f).pid;
    process.kill(owner, "SIGKILL");
    expect((await killed).signal).toBe("SIGKILL");
    expect(existsSync(lockPath(f)), "the killed call left its lock behind").toBe(true);
    f.update((s) => {
      s.lockHoldMs = 0;
    });

    const t0 = Date.now();
    const r = await run(f, ["--fake-alloc", "4242", "0", "2048", "VLLM::Worker_TP0"], 20_000);
    const tookMs = Date.now() - t0;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`broke the state lock of pid ${owner} (dead)`);
    // broken at once, not after the age limit (10 s) for owners that cannot be checked
    expect(tookMs).toBeLessThan(3000);
    expect(f.read().allocations).toContainEqual(expect.objectContaining({ pid: 4242, uuid: gpus[0].uuid, usedMiB: 2048, processName: "VLLM::Worker_TP0" }));
    expect(existsSync(lockPath(f))).toBe(false);
    expect(readdirSync(f.dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });

  it("many --fake-alloc calls racing to break the same dead lock keep every allocation", async () => {
    const gpus = [fakeGpu(0), fakeGpu(1)];
    const f = stateFile({ gpus, allocations: [], lockHoldMs: 60_000 });
    const killed = runKilledAfter(f, ["--fake-free", "1"], 60_000);
    await waitForLock(f);
    process.kill(lockOwner(f).pid, "SIGKILL");
    await killed;
    f.update((s) => {
      s.lockHoldMs = 0;
    });

    const pids = [1, 2, 3, 4, 5, 6, 7, 8].map((i) => 500_000 + i);
    const results = await Promise.all(pids.map((pid, i) => run(f, ["--fake-alloc", String(pid), String(i % 2), "10", `p${pid}`], 20_000)));
    expect(results.map((r) => r.code)).toEqual(pids.map(() => 0));
    expect(
      f
        .read()
        .allocations.map((a) => a.pid)
        .sort(),
    ).toEqual(pids);
    // exactly one of them broke it; the others found it gone or freshly taken
    expect(results.filter((r) => r.stderr.includes("broke the state lock")).length).toBe(1);
    expect(existsSync(lockPath(f))).toBe(false);
  });

  it("a live owner is waited for, then --fake-alloc fails loudly (exit 75) without registering", async () => {
    const gpus = [fakeGpu(0)];
    const f = stateFile({ gpus, allocations: [], lockHoldMs: 60_000 });
    const holder = track(spawn(FAKE_NVIDIA_SMI_PATH, ["--fake-free", "1"], { env: f.env(), stdio: "ignore" }));
    await waitForLock(f);
    expect(lockOwner(f).pid).toBe(holder.pid);

    const t0 = Date.now();
    const r = await run(f, ["--fake-alloc", "4243", "0", "10"], 10_000);
    expect(r.code).toBe(75);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(LOCK_WAIT_MS);
    expect(r.stderr).toMatch(
      new RegExp(`--fake-alloc of 10 MiB for pid 4243 on GPU 0 failed, NOT registered: .* still busy after ${LOCK_WAIT_MS} ms: pid ${holder.pid} \\(alive\\)`),
    );
    expect(f.read().allocations).toEqual([]);
    expect(lockOwner(f).pid, "a live owner's lock is never broken").toBe(holder.pid);
  });

  it("an unknown GPU is an error of its own (exit 2), and releases the lock", async () => {
    const f = stateFile({ gpus: [fakeGpu(0)], allocations: [] });
    const r = await run(f, ["--fake-alloc", "4244", "GPU-nope", "10"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no GPU GPU-nope");
    expect(existsSync(lockPath(f))).toBe(false);
    expect((await run(f, ["--fake-alloc", "4244", "0", "10"])).code).toBe(0);
  });
});
