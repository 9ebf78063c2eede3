/** Cases 1–3 (cases/waitingForGpu.ts), through diagnose(). */
import { describe, expect, it } from "vitest";
import type { GpuAttributed } from "../../contract/types";
import { diagnose, gpusUsedByUnit } from "../diagnose";
import {
  ago,
  cmd,
  evidence,
  facts,
  GIB,
  gpuUuid,
  holder,
  incidentFacts,
  incidentGpus,
  NOW,
  proc,
  series,
  startPreUnit,
  steadyFacts,
  steadyGpus,
  UINT64_MAX,
  UNIT,
  WAIT_GPU_ARGV,
} from "../fixtures";

describe("case 1 — waiting in ExecStartPre for memory held by an exited process (the incident)", () => {
  it("says how much, where, who, when, how fast and whether it beats TimeoutStartSec", () => {
    const d = diagnose(incidentFacts());
    expect(d.code).toBe("waiting-gpu-exited");
    expect(d.severity).toBe("warning");
    expect(d.headline).toBe(
      "Waiting in ExecStartPre for 598 GiB of GPU memory still held by exited process 4121 " +
        "(vllm-kimi-k25.service, killed 14 s ago) on GPUs 0–7; draining at 21 GiB/s, free in ~28 s " +
        "— 1 min 20 s before TimeoutStartSec.",
    );
    // 598 GiB at 21 GiB/s
    expect(d.etaMs).toBeCloseTo((598 / 21) * 1000, -1);
    expect(evidence(d, "Drain rate")?.value).toMatch(/21504 MiB\/s, linear fit over 11 samples in 10 s/);
    expect(evidence(d, "Exited PID 4121")?.value).toMatch(/598 GiB on GPUs 0–7 · vllm-kimi-k25.service · .* · last seen alive 14 s ago/);
    expect(evidence(d, "ExecStartPre")).toMatchObject({ source: "proc" });
    expect(evidence(d, "ExecStartPre")?.value).toMatch(/^PID 5210, running 12 s: \/bin\/bash -c 'while .*nvidia-smi/);
    expect(evidence(d, "TimeoutStartSec")?.value).toBe("2 min; 1 min 48 s left (at 03:13:48)");
    expect(evidence(d, "GPUs")?.value).toMatch(/used by this unit last time it ran/);
    expect(d.nextStep?.text).toMatch(/Nothing to do.*28 s/);
    expect(d.nextStep?.action).toBeUndefined();
  });

  it("each evidence item names its source", () => {
    const d = diagnose(incidentFacts());
    const sources = new Set(d.evidence.map((e) => e.source));
    expect(sources).toEqual(new Set(["systemd", "proc", "gpudeck", "nvidia-smi"]));
  });

  it("ignores the plateau before the drain began (the fit starts at the peak)", () => {
    // 4 s of plateau after the kill would halve a naive fit's rate; the drain is still 21 GiB/s.
    const d = diagnose(incidentFacts());
    expect(d.headline).toContain("draining at 21 GiB/s");
  });

  it("predicts the start will time out when the drain is too slow", () => {
    const d = diagnose(incidentFacts({ rateMiBs: 2 * GIB }));
    expect(d.code).toBe("waiting-gpu-exited");
    expect(d.severity).toBe("critical");
    // 788 GiB left at 2 GiB/s = 394 s; 108 s left until the timeout
    expect(d.headline).toMatch(
      /draining at 2 GiB\/s, free in ~6 min 34 s — 4 min 46 s after TimeoutStartSec \(in 1 min 48 s\), so the start will time out first\.$/,
    );
    expect(d.nextStep?.text).toMatch(/time out first/);
    expect(d.etaMs).toBeCloseTo(394_000, -3);
  });

  it("drain not progressing: no ETA, and says so", () => {
    const d = diagnose(incidentFacts({ rateMiBs: 0 }));
    expect(d.code).toBe("waiting-gpu-exited");
    expect(d.severity).toBe("critical");
    expect(d.headline).toContain("808 GiB of GPU memory still held by exited process 4121");
    expect(d.headline).toMatch(/not draining \(no drop over the last 14 s\), so it may never be freed — TimeoutStartSec in 1 min 48 s\.$/);
    expect(d.etaMs).toBeUndefined();
    expect(evidence(d, "Drain rate")?.value).toMatch(/^none: memory unchanged/);
    expect(evidence(d, "Free in")).toBeUndefined();
    expect(d.nextStep?.text).toMatch(/fuser -v \/dev\/nvidia\*/);
  });

  it("memory growing again is not a drain", () => {
    const f = incidentFacts();
    const grow = (at: number) => incidentGpus(at, { rateMiBs: 0 }).map((g) => ({ ...g, memoryUsedMiB: (g.memoryUsedMiB ?? 0) + (at - ago(14)) / 10 }));
    f.gpuRecent = series(60, 0, grow);
    f.gpuNow = f.gpuRecent[f.gpuRecent.length - 1];
    const d = diagnose(f);
    expect(d.headline).toContain("growing, not draining");
    expect(d.severity).toBe("critical");
    expect(d.etaMs).toBeUndefined();
  });

  it("too few samples since the exit: rate unknown yet, no ETA, still a warning", () => {
    const f = incidentFacts();
    f.gpuRecent = [f.gpuNow!];
    const d = diagnose(f);
    expect(d.code).toBe("waiting-gpu-exited");
    expect(d.headline).toMatch(/drain rate not known yet — TimeoutStartSec in 1 min 48 s\.$/);
    expect(d.severity).toBe("warning");
    expect(d.etaMs).toBeUndefined();
    expect(evidence(d, "Drain rate")?.value).toMatch(/^unknown: 1 usable sample/);
  });

  it("TimeoutStartSec already passed", () => {
    // started 130 s ago with a 120 s timeout; systemd should be stopping it any moment
    const d = diagnose(incidentFacts({ startPreAt: ago(130) }));
    expect(d.headline).toMatch(/TimeoutStartSec already passed 10 s ago\.$/);
    expect(d.severity).toBe("critical");
    expect(evidence(d, "TimeoutStartSec")?.value).toBe("2 min; passed 10 s ago");
  });

  it("no TimeoutStartSec (infinity)", () => {
    const d = diagnose(incidentFacts({ timeoutStartUsec: UINT64_MAX }));
    expect(d.headline).toMatch(/free in ~28 s \(no TimeoutStartSec\)\.$/);
    expect(d.severity).toBe("warning");
    expect(evidence(d, "TimeoutStartSec")?.value).toBe("infinity");
  });

  it("counts the timeout from the current ExecStartPre when it started after the phase began", () => {
    // systemd re-arms the start timer per spawned command; a second ExecStartPre started 2 s ago.
    const f = incidentFacts();
    f.unit = { ...f.unit!, controlProcess: proc(5300, WAIT_GPU_ARGV, { startedAtMs: ago(2) }) };
    expect(evidence(diagnose(f), "TimeoutStartSec")?.value).toBe("2 min; 1 min 58 s left (at 03:13:58)");
  });

  it("vLLM workers: several exited PIDs, one per GPU", () => {
    const d = diagnose(incidentFacts({ workers: true }));
    expect(d.headline).toContain(
      "598 GiB of GPU memory still held by 8 exited processes of vllm-kimi-k25.service (PIDs 4121, 4122, 4123 +5; killed 14 s ago) on GPUs 0–7",
    );
    expect(d.evidence.filter((e) => e.label.startsWith("Exited PID")).length).toBe(8);
  });

  it("says 'exited' rather than 'killed' when the holder was not this unit's killed main process", () => {
    const f = incidentFacts();
    f.journal = f.journal.map((e) => ({ ...e, message: e.message.replace("code=killed, status=9/KILL", "code=exited, status=1/FAILURE") }));
    expect(diagnose(f).headline).toContain("(vllm-kimi-k25.service, exited 14 s ago)");
    // while the unit still shows its last exit (before the next start resets it), that counts
    f.unit = { ...f.unit!, execMainCode: 1, execMainStatus: 1, execMainExitUsec: f.journal[0].atUsec };
    expect(diagnose(f).headline).toContain("(vllm-kimi-k25.service, exited 14 s ago)");
  });

  it("only counts the GPUs the unit needs (unitGpus given)", () => {
    // another unit holds GPUs 4–7; this unit needs only 0–3 → still the exited case, for 0–3
    const f = incidentFacts({
      gpuCount: 8,
      extraHolders: (i) => (i >= 4 ? [holder("unit", 9000 + i, 70 * GIB, { unit: "llama-70b.service" })] : []),
    });
    f.unitGpus = [0, 1, 2, 3].map(gpuUuid);
    const d = diagnose(f);
    expect(d.code).toBe("waiting-gpu-exited");
    expect(d.headline).toContain("299 GiB of GPU memory still held by exited process 4121");
    expect(d.headline).toContain("on GPUs 0–3");
    expect(evidence(d, "GPUs")?.value).toMatch(/GPUs 0–3 — the unit's GPUs/);
  });

  it("falls back to all GPUs when the unit's own are unknown, and says so", () => {
    const u = startPreUnit(5);
    const f = steadyFacts(u, () => steadyGpus((i) => (i === 2 ? [holder("exited", 777, 40 * GIB, { unit: "old-job.service", exitedAtMs: ago(20) })] : [])));
    const d = diagnose(f);
    expect(d.code).toBe("waiting-gpu-exited");
    expect(d.headline).toContain("40 GiB of GPU memory still held by exited process 777 (old-job.service, exited 20 s ago) on GPU 2");
    expect(evidence(d, "GPUs")?.value).toMatch(/all GPUs \(the unit's own are not known\)/);
  });

  it("telemetry with null cells: memory.used N/A and GPU index unknown", () => {
    const f = incidentFacts();
    const strip = (g: GpuAttributed, i: number): GpuAttributed => ({
      ...g,
      memoryUsedMiB: null,
      memoryTotalMiB: null,
      utilizationPct: null,
      index: i === 7 ? null : g.index,
    });
    f.gpuRecent = f.gpuRecent.map((s) => ({ ...s, gpus: s.gpus.map(strip) }));
    f.gpuNow = f.gpuRecent[f.gpuRecent.length - 1];
    const d = diagnose(f);
    expect(d.code).toBe("waiting-gpu-exited");
    // rate from the holders' own numbers when memory.used is missing
    expect(d.headline).toContain("draining at 21 GiB/s");
    expect(d.headline).toContain("on GPUs 0–6, GPU-00000007");
    expect(evidence(d, "GPU memory used")?.value).toMatch(/^unknown \(memory.used N\/A\) on/);
  });

  it("notes a stale GPU sample", () => {
    const f = incidentFacts();
    f.nowMs = NOW + 8_000;
    expect(evidence(diagnose(f), "GPU data")?.value).toBe("last sample 8 s old");
  });

  // Seen on systemd 252 with the fake nvidia-smi (e2e/diagnosis/cases.test.ts).
  it("a plateau in the first seconds after the exit is teardown, not 'may never be freed'", () => {
    const exitedAt = ago(4);
    const recent = series(4, 0, () => steadyGpus((i) => (i < 4 ? [holder("exited", 4200 + i, 20 * GIB, { exitedAtMs: exitedAt })] : [])));
    const d = diagnose(facts({ unit: startPreUnit(3), gpuNow: recent[recent.length - 1], gpuRecent: recent }));
    expect(d.code).toBe("waiting-gpu-exited");
    expect(d.headline).toContain("80 GiB of GPU memory still held by 4 exited processes of vllm-kimi-k25.service");
    expect(d.headline).toContain("not draining yet (no drop in the 4 s since the exit; teardown can take several seconds)");
    expect(d.headline).not.toContain("may never be freed");
    expect(d.severity).toBe("warning");
    expect(d.nextStep?.text).toMatch(/^Watch the drain/);
    expect(d.etaMs).toBeUndefined();
  });

  it("one worker per GPU: GPUs already freed count as drain progress", () => {
    // Workers on GPUs 0–3 exited 9 s ago; each GPU frees at once, 2.5 s apart. Only GPU 3 still
    // lists an exited worker; the drain over GPUs 0–3 is 20 GiB per 2.5 s.
    const exitedAt = ago(9);
    const freedAt = (i: number) => exitedAt + (i + 1) * 2500;
    const recent = series(9, 0, (at) => steadyGpus((i) => (i < 4 && at < freedAt(i) ? [holder("exited", 4200 + i, 20 * GIB, { exitedAtMs: exitedAt })] : [])));
    const d = diagnose(facts({ unit: startPreUnit(8), gpuNow: recent[recent.length - 1], gpuRecent: recent }));
    expect(d.code).toBe("waiting-gpu-exited");
    const m =
      /^Waiting in ExecStartPre for 20 GiB of GPU memory still held by exited process 4203 \(vllm-kimi-k25\.service, exited 9 s ago\) on GPU 3; draining at (\d+(?:\.\d)?) GiB\/s, free in ~(\d) s/.exec(
        d.headline,
      );
    expect(m, d.headline).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThan(6);
    expect(Number(m![1])).toBeLessThan(10);
    expect(d.severity).toBe("warning");
  });

  it("a script ExecStartPre: waits for this unit's own exited processes even when its nvidia-smi poll is not caught", () => {
    const script = ["/bin/sh", "/usr/local/bin/wait-gpu-free", "0,1", "1000"];
    const u = startPreUnit(2, {
      execStartPre: [cmd("/usr/local/bin/wait-gpu-free", "0,1", "1000")],
      controlProcess: proc(5210, script, { startedAtMs: ago(2) }),
      processes: [proc(5210, script, { startedAtMs: ago(2) })],
    });
    const own = () => steadyGpus((i) => (i < 2 ? [holder("exited", 4200 + i, 20 * GIB, { exitedAtMs: ago(3) })] : []));
    const d = diagnose(steadyFacts(u, own));
    expect(d.code).toBe("waiting-gpu-exited");
    expect(d.headline).toMatch(/^Waiting in ExecStartPre for 40 GiB of GPU memory still held by 2 exited processes of vllm-kimi-k25\.service/);
    expect(evidence(d, "Why GPU memory")?.value).toMatch(/this unit's own exited processes \(the ExecStartPre was not seen running nvidia-smi\)/);

    // Another unit's memory is not blamed without seeing the poll: that would be a guess.
    const other = () => steadyGpus((i) => (i < 2 ? [holder("unit", 7000 + i, 20 * GIB, { unit: "llama-70b.service" })] : []));
    expect(diagnose(steadyFacts(u, other)).code).toBe("start-pre-running");
    // Caught in the act (its nvidia-smi child in the cgroup): then it is blamed.
    const caught = { ...u, processes: [...u.processes, proc(5230, ["nvidia-smi", "-i", "0,1", "--query-gpu=memory.used", "--format=csv,noheader,nounits"])] };
    expect(diagnose(steadyFacts(caught, other)).code).toBe("waiting-gpu-unit");
  });
});

// ---------------------------------------------------------------------------------------
describe("case 2 — memory held by another running unit", () => {
  const otherUnit = () =>
    steadyFacts(startPreUnit(20), () => steadyGpus((i) => (i < 4 ? [holder("unit", 9100 + i, 70 * GIB, { unit: "llama-70b.service" })] : [])));

  it("names the unit, the memory and the GPUs, and offers to open it", () => {
    const d = diagnose(otherUnit());
    expect(d.code).toBe("waiting-gpu-unit");
    expect(d.severity).toBe("critical");
    expect(d.headline).toBe(
      "Waiting in ExecStartPre for GPU memory: 280 GiB on GPUs 0–3 is held by running unit llama-70b.service " +
        "(PID 9100, 9101, 9102 +1), which will not be freed until that unit stops — TimeoutStartSec in 1 min 40 s.",
    );
    expect(d.nextStep?.action).toEqual({ kind: "open-unit", unit: "llama-70b.service" });
    expect(d.etaMs).toBe(100_000);
    expect(evidence(d, "PID 9100")?.value).toMatch(/70 GiB on GPU 0 · llama-70b.service/);
  });

  it("exited memory that outweighs a small co-resident unit is what the start waits for", () => {
    const f = incidentFacts({ extraHolders: (i) => (i === 0 ? [holder("unit", 9100, 30 * GIB, { unit: "embedder.service" })] : []) });
    const d = diagnose(f);
    expect(d.code).toBe("waiting-gpu-exited");
    expect(d.headline).toContain("still held by exited process 4121 (vllm-kimi-k25.service, killed 14 s ago)");
    expect(d.headline).toContain("live processes hold another 30 GiB there");
    expect(evidence(d, "Drain rate")).toBeDefined();
  });

  it("memory held by both an exited process and a bigger running unit: the unit blocks, the drain is mentioned", () => {
    const f = incidentFacts({
      extraHolders: () => [holder("unit", 9100, 76 * GIB, { unit: "embedder.service" })],
    });
    const d = diagnose(f);
    expect(d.code).toBe("waiting-gpu-unit");
    expect(d.headline).toContain("is held by running unit embedder.service (PID 9100)");
    expect(d.headline).toContain(
      "another 598 GiB is held by exited process 4121 (vllm-kimi-k25.service, killed 14 s ago), draining at 21 GiB/s, free in ~28 s",
    );
    expect(d.nextStep?.action).toEqual({ kind: "open-unit", unit: "embedder.service" });
    expect(evidence(d, "Drain rate")).toBeDefined();
  });

  it("several units: largest first", () => {
    const f = steadyFacts(startPreUnit(20), () =>
      steadyGpus((i) =>
        i === 0 ? [holder("unit", 9100, 10 * GIB, { unit: "small.service" })] : i === 1 ? [holder("unit", 9200, 60 * GIB, { unit: "big.service" })] : [],
      ),
    );
    const d = diagnose(f);
    expect(d.headline).toContain("70 GiB on GPUs 0, 1 is held by running units big.service (60 GiB) and small.service (10 GiB)");
    expect(d.nextStep?.action?.unit).toBe("big.service");
  });

  it("a unit on GPUs this unit does not use does not block it (GPUs derived from history)", () => {
    // this unit ran on GPUs 0–3 (exited holders there in the history); another unit uses 4–7
    const u = startPreUnit(20);
    const recent = [
      ...series(60, 31, () => steadyGpus((i) => (i < 4 ? [holder("unit", 4121, 70 * GIB)] : [holder("unit", 9100 + i, 70 * GIB, { unit: "other.service" })]))),
      ...series(30, 0, () => steadyGpus((i) => (i < 4 ? [] : [holder("unit", 9100 + i, 70 * GIB, { unit: "other.service" })]))),
    ];
    const d = diagnose(facts({ unit: u, gpuNow: recent[recent.length - 1], gpuRecent: recent }));
    expect(d.code).toBe("start-pre-running");
    expect(d.headline).toContain("GPUs 0–3 hold no memory, so it should finish shortly");
    expect(gpusUsedByUnit(UNIT, recent)).toEqual([0, 1, 2, 3].map(gpuUuid));
  });
});

// ---------------------------------------------------------------------------------------
describe("case 3 — memory held by a process outside any unit", () => {
  it("gives the PID and command line", () => {
    const f = steadyFacts(startPreUnit(30), () =>
      steadyGpus((i) =>
        i === 5 ? [holder("outside", 7777, 40 * GIB, { cmdline: ["python3", "train.py", "--batch-size", "64"], processName: "python3" })] : [],
      ),
    );
    const d = diagnose(f);
    expect(d.code).toBe("waiting-gpu-outside");
    expect(d.severity).toBe("critical");
    expect(d.headline).toBe(
      "Waiting in ExecStartPre for GPU memory: 40 GiB on GPU 5 is held by PID 7777 outside any systemd unit " +
        "(`python3 train.py --batch-size 64`), which will not be freed until it exits — TimeoutStartSec in 1 min 30 s.",
    );
    expect(d.nextStep?.text).toMatch(/Stop PID 7777/);
    expect(evidence(d, "PID 7777 (no unit)")?.source).toBe("proc");
  });

  it("memory nobody is listed for (another PID namespace)", () => {
    const f = steadyFacts(startPreUnit(30), () =>
      steadyGpus(
        () => [],
        (i) => (i === 1 ? { unattributedMiB: 12 * GIB, memoryUsedMiB: 12 * GIB } : {}),
      ),
    );
    const d = diagnose(f);
    expect(d.code).toBe("waiting-gpu-unattributed");
    expect(d.headline).toMatch(/^Waiting in ExecStartPre for GPU memory: 12 GiB on GPU 1 is in use but nvidia-smi lists no process for it/);
    expect(d.headline).toContain("not draining");
    expect(d.nextStep?.text).toMatch(/fuser/);
  });

  it("a process left over in the unit's own cgroup", () => {
    // A left-over process is in the unit's cgroup, so systemd lists it among the unit's processes.
    const u = startPreUnit(30);
    u.processes = [...u.processes, proc(4130, ["python3", "-m", "vllm.worker"])];
    const f = steadyFacts(u, () => steadyGpus((i) => (i === 0 ? [holder("unit", 4130, 20 * GIB, { unit: UNIT })] : [])));
    const d = diagnose(f);
    expect(d.code).toBe("waiting-gpu-leftover");
    expect(d.headline).toContain("20 GiB on GPU 0 is held by 1 process (PID 4130) still running in this unit from an earlier run");
    expect(d.nextStep?.text).toMatch(/kill -9 4130/);
  });

  it("only the GPUs its ExecStartPre queries with nvidia-smi -i count (seen in e2e/diagnosis)", () => {
    // Never ran, so its own GPUs are unknown; it polls GPU 5 only. A unit on GPU 4 is not the reason.
    const argv = ["/bin/sh", "-c", 'while [ "$(nvidia-smi -i 5 --query-gpu=memory.used --format=csv,noheader,nounits)" -gt 1000 ]; do sleep 0.5; done'];
    const u = startPreUnit(4, {
      execStartPre: [cmd(...argv)],
      controlProcess: proc(5210, argv, { startedAtMs: ago(4) }),
      processes: [proc(5210, argv, { startedAtMs: ago(4) })],
    });
    const busy = (i: number) =>
      i === 4
        ? [holder("unit", 7004, 30 * GIB, { unit: "llama-70b.service" })]
        : i === 5
          ? [holder("outside", 7777, 12 * GIB, { cmdline: ["python3", "train.py"] })]
          : [];
    const d = diagnose(steadyFacts(u, () => steadyGpus(busy)));
    expect(d.code).toBe("waiting-gpu-outside");
    expect(d.headline).toMatch(/^Waiting in ExecStartPre for GPU memory: 12 GiB on GPU 5 is held by PID 7777 outside any systemd unit/);
    expect(evidence(d, "GPUs")?.value).toBe("GPU 5 — the GPUs its ExecStartPre queries (nvidia-smi -i)");
    // GPU 5 free, GPU 4 busy: nothing to wait for.
    const free = diagnose(steadyFacts(u, () => steadyGpus((i) => (i === 4 ? busy(4) : []))));
    expect(free.code).toBe("start-pre-running");
    expect(free.headline).toContain("it polls nvidia-smi and GPU 5 holds no memory, so it should finish shortly");
  });

  it("a holder of this unit that is no longer in its cgroup has exited since the sample (kill + restart)", () => {
    // The sample was taken while the killed worker still lived; the unit's processes, read
    // later, show only the new ExecStartPre. Not "waits for itself": memory of an exited process.
    const u = startPreUnit(1);
    const f = steadyFacts(u, () => steadyGpus((i) => (i === 0 ? [holder("unit", 4130, 20 * GIB, { unit: UNIT })] : [])));
    const d = diagnose(f);
    expect(d.code).toBe("waiting-gpu-exited");
    expect(d.headline).toMatch(
      /^Waiting in ExecStartPre for 20 GiB of GPU memory still held by exited process 4130 \(vllm-kimi-k25\.service, exited <1 s ago\) on GPU 0; /,
    );
  });
});

// ---------------------------------------------------------------------------------------
