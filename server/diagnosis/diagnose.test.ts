import { describe, expect, it } from "vitest";
import type { GpuAttributed, UnitDetail } from "../contract/types";
import { DIAGNOSIS_CODES, diagnose, gpusUsedByUnit } from "./diagnose";
import type { DependencyState } from "./types";
import type { Diagnosis } from "../contract/diagnosis";
import {
  GIB,
  NOW,
  UINT64_MAX,
  UNIT,
  VLLM_ARGV,
  WAIT_GPU_ARGV,
  ago,
  cmd,
  facts,
  gpu,
  gpuUuid,
  holder,
  incidentFacts,
  incidentGpus,
  line,
  proc,
  sample,
  series,
  systemdLine,
  transitions,
  unit,
  usec,
} from "./fixtures";

const evidence = (d: Diagnosis, label: string | RegExp) => d.evidence.find((e) => (typeof label === "string" ? e.label === label : label.test(e.label)));
const values = (d: Diagnosis) => d.evidence.map((e) => `${e.label}: ${e.value}`).join("\n");

/** A unit sitting in activating/start-pre since `secondsAgo`, its ExecStartPre polling nvidia-smi. */
function startPreUnit(secondsAgo: number, overrides: Partial<UnitDetail> = {}): UnitDetail {
  return unit({
    activeState: "activating",
    subState: "start-pre",
    mainPid: 0,
    controlPid: 5210,
    stateChangeUsec: usec(ago(secondsAgo)),
    timestamps: {
      inactiveExitUsec: usec(ago(secondsAgo)),
      activeEnterUsec: usec(ago(7200)),
      activeExitUsec: usec(ago(600)),
      inactiveEnterUsec: usec(ago(600)),
    },
    controlProcess: proc(5210, WAIT_GPU_ARGV, { startedAtMs: ago(secondsAgo) }),
    mainProcess: null,
    processes: [proc(5210, WAIT_GPU_ARGV, { startedAtMs: ago(secondsAgo) })],
    ...overrides,
  });
}

/** Eight idle H200s plus whatever holders the case puts on them (same in every sample). */
function steadyGpus(holders: (index: number) => GpuAttributed["holders"], extra: (index: number) => Partial<GpuAttributed> = () => ({})): GpuAttributed[] {
  return Array.from({ length: 8 }, (_, i) => gpu(i, { holders: holders(i), ...extra(i) }));
}

function steadyFacts(u: UnitDetail, gpus: () => GpuAttributed[], overrides = {}) {
  const recent = series(30, 0, () => gpus());
  return facts({ unit: u, gpuNow: recent[recent.length - 1], gpuRecent: recent, ...overrides });
}

describe("API", () => {
  it("every code returned is one of the stable DIAGNOSIS_CODES", () => {
    expect(DIAGNOSIS_CODES).toContain(diagnose(incidentFacts()).code);
    expect(new Set(DIAGNOSIS_CODES).size).toBe(DIAGNOSIS_CODES.length);
  });

  it("does not mutate its input", () => {
    const f = incidentFacts();
    const before = JSON.stringify(f);
    diagnose(f);
    expect(JSON.stringify(f)).toBe(before);
  });

  it("is deterministic: same facts, same diagnosis", () => {
    expect(diagnose(incidentFacts())).toEqual(diagnose(incidentFacts()));
  });
});

// ---------------------------------------------------------------------------------------
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
describe("activating/start-pre without GPU contention", () => {
  it("plain ExecStartPre with its command and running time", () => {
    const argv = ["/usr/local/bin/fetch-weights", "--model", "kimi-k2.5"];
    const u = startPreUnit(12, { execStartPre: [cmd(...argv)], controlProcess: proc(5210, argv, { startedAtMs: ago(12) }), processes: [proc(5210, argv)] });
    const d = diagnose(facts({ unit: u }));
    expect(d.code).toBe("start-pre-running");
    expect(d.severity).toBe("info");
    expect(d.headline).toBe("ExecStartPre running for 12 s: `/usr/local/bin/fetch-weights --model kimi-k2.5` — TimeoutStartSec in 1 min 48 s.");
    expect(d.etaMs).toBe(108_000);
  });

  it("memory held but the ExecStartPre does not poll nvidia-smi: not called waiting for GPU", () => {
    const argv = ["/usr/local/bin/fetch-weights"];
    const u = startPreUnit(12, { execStartPre: [cmd(...argv)], controlProcess: proc(5210, argv, { startedAtMs: ago(12) }), processes: [proc(5210, argv)] });
    const f = steadyFacts(u, () => steadyGpus(() => [holder("unit", 9100, 70 * GIB, { unit: "other.service" })]));
    expect(diagnose(f).code).toBe("start-pre-running");
  });

  it("recognises nvidia-smi in a child of the ExecStartPre script", () => {
    const script = ["/bin/bash", "/usr/local/bin/wait-for-gpus.sh"];
    const u = startPreUnit(12, {
      execStartPre: [cmd("/usr/local/bin/wait-for-gpus.sh")],
      controlProcess: proc(5210, script, { startedAtMs: ago(12) }),
      processes: [proc(5210, script), proc(5230, ["nvidia-smi", "--query-gpu=memory.used", "--format=csv"])],
    });
    const f = steadyFacts(u, () => steadyGpus(() => [holder("unit", 9100, 70 * GIB, { unit: "other.service" })]));
    expect(diagnose(f).code).toBe("waiting-gpu-unit");
  });

  it("no GPU data at all: says it cannot tell", () => {
    const d = diagnose(facts({ unit: startPreUnit(40) }));
    expect(d.code).toBe("start-pre-running");
    expect(d.headline).toMatch(
      /^ExecStartPre running for 40 s: `\/bin\/bash -c .*`; it polls nvidia-smi, but gpudeck has no GPU data to tell what it waits for — TimeoutStartSec in 1 min 20 s\.$/,
    );
    expect(evidence(d, "GPU data")?.value).toMatch(/none/);
  });

  it("GPUs free: it should finish shortly", () => {
    const d = diagnose(steadyFacts(startPreUnit(3), () => steadyGpus(() => [])));
    expect(d.code).toBe("start-pre-running");
    expect(d.headline).toContain("GPUs 0–7 hold no memory, so it should finish shortly");
  });

  it("command line unknown (control process gone from /proc): uses the unit's only ExecStartPre", () => {
    const d = diagnose(facts({ unit: startPreUnit(3, { controlProcess: null, processes: [] }) }));
    expect(d.headline).toContain("`/bin/bash -c 'while");
    expect(evidence(d, "ExecStartPre")?.source).toBe("systemd");
  });

  it("timeout passed while still in start-pre: warning", () => {
    const argv = ["/usr/local/bin/fetch-weights"];
    const u = startPreUnit(125, { execStartPre: [cmd(...argv)], controlProcess: proc(5210, argv, { startedAtMs: ago(125) }) });
    const d = diagnose(facts({ unit: u }));
    expect(d.severity).toBe("warning");
    expect(d.headline).toMatch(/TimeoutStartSec already passed 5 s ago\.$/);
    expect(d.etaMs).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------
describe("case 4 — ExecStartPre or ExecStart exited non-zero", () => {
  const failedUnit = (overrides: Partial<UnitDetail> = {}) =>
    unit({
      activeState: "failed",
      subState: "failed",
      result: "exit-code",
      mainPid: 0,
      stateChangeUsec: usec(ago(60)),
      mainProcess: null,
      processes: [],
      execStartPre: [cmd("/usr/local/bin/check-model", "/models/kimi-k2.5")],
      ...overrides,
    });
  const preFailTransitions = () =>
    transitions("inactive/dead", [
      [ago(65), "activating/start-pre", { controlPid: 5300 }],
      [ago(60), "failed/failed", { result: "exit-code" }],
    ]);
  const preFailJournal = () => [
    systemdLine(ago(65), "Starting vllm-kimi-k25.service - vLLM Kimi K2.5..."),
    line(ago(64), "checking /models/kimi-k2.5"),
    line(ago(61), "ERROR: /models/kimi-k2.5/config.json: No such file or directory", { priority: 3 }),
    systemdLine(ago(60), "vllm-kimi-k25.service: Control process exited, code=exited, status=1/FAILURE"),
    systemdLine(ago(60), "vllm-kimi-k25.service: Failed with result 'exit-code'."),
    systemdLine(ago(60), "Failed to start vllm-kimi-k25.service - vLLM Kimi K2.5."),
  ];

  it("ExecStartPre: which command, exit code from the journal, last output lines", () => {
    const d = diagnose(facts({ unit: failedUnit(), recentTransitions: preFailTransitions(), journal: preFailJournal() }));
    expect(d.code).toBe("start-pre-failed");
    expect(d.severity).toBe("critical");
    expect(d.headline).toBe("Failed 1 min ago: ExecStartPre `/usr/local/bin/check-model /models/kimi-k2.5` exited with code 1 (generic failure).");
    expect(values(d)).toContain("ERROR: /models/kimi-k2.5/config.json: No such file or directory");
    expect(values(d)).toContain("Control process exited, code=exited, status=1/FAILURE");
    // systemd's own chatter is not shown as the service's output
    expect(values(d)).not.toContain("Failed to start vllm-kimi-k25.service");
    expect(d.nextStep?.action).toEqual({ kind: "restart", unit: UNIT });
  });

  it("several ExecStartPre lines: says one of them and lists them", () => {
    const u = failedUnit({ execStartPre: [cmd("/usr/local/bin/check-model"), cmd(...WAIT_GPU_ARGV)] });
    const d = diagnose(facts({ unit: u, recentTransitions: preFailTransitions(), journal: preFailJournal() }));
    expect(d.headline).toBe("Failed 1 min ago: one of the 2 ExecStartPre commands exited with code 1 (generic failure).");
    expect(evidence(d, "ExecStartPre #2")?.value).toMatch(/nvidia-smi/);
  });

  it("exit status 203 (binary missing) gets a hint and a matching next step", () => {
    const journal = [systemdLine(ago(60), "vllm-kimi-k25.service: Control process exited, code=exited, status=203/EXEC")];
    const d = diagnose(facts({ unit: failedUnit(), recentTransitions: preFailTransitions(), journal }));
    expect(d.headline).toContain("exited with code 203 (EXEC: binary missing or not executable)");
    expect(d.nextStep?.text).toMatch(/exists and is executable/);
  });

  it("exit code unknown (journal empty): still names the phase and the result", () => {
    const d = diagnose(facts({ unit: failedUnit(), recentTransitions: preFailTransitions() }));
    expect(d.headline).toBe("Failed 1 min ago: ExecStartPre `/usr/local/bin/check-model /models/kimi-k2.5` failed (Result=exit-code).");
  });

  it("ExecStart of a Type=notify unit (activating/start → failed): exit code from ExecMainStatus", () => {
    const u = failedUnit({ execMainCode: 1, execMainStatus: 2, execMainStartUsec: usec(ago(70)), execMainExitUsec: usec(ago(60)) });
    const recent = transitions("inactive/dead", [
      [ago(75), "activating/start-pre"],
      [ago(70), "activating/start", { mainPid: 4200 }],
      [ago(60), "failed/failed", { result: "exit-code" }],
    ]);
    const journal = [
      line(ago(61), "vllm: error: unrecognized arguments: --tensor-parallel 8"),
      systemdLine(ago(60), "Main process exited, code=exited, status=2/INVALIDARGUMENT"),
    ];
    const d = diagnose(facts({ unit: u, recentTransitions: recent, journal }));
    expect(d.code).toBe("start-failed");
    expect(d.headline).toBe(
      `Failed 1 min ago: ExecStart \`${VLLM_ARGV.join(" ")}\` exited with code 2 (invalid argument / misuse) before the service reported ready.`,
    );
    expect(evidence(d, "Main process")?.value).toMatch(/ExecMainCode=1, ExecMainStatus=2/);
    expect(values(d)).toContain("unrecognized arguments");
  });

  it("no transitions recorded: the phase comes from the unit's timestamps", () => {
    // main never started in this attempt (ExecMainStart older than InactiveExit) → ExecStartPre
    const u = failedUnit({
      execMainStartUsec: usec(ago(7200)),
      timestamps: { inactiveExitUsec: usec(ago(65)), activeEnterUsec: usec(ago(7200)), activeExitUsec: usec(ago(600)), inactiveEnterUsec: usec(ago(60)) },
    });
    const d = diagnose(facts({ unit: u, journal: preFailJournal() }));
    expect(d.code).toBe("start-pre-failed");
    expect(d.headline).toContain("exited with code 1");
  });
});

// ---------------------------------------------------------------------------------------
describe("case 5 — Result=timeout, and in which phase", () => {
  const timedOut = (overrides: Partial<UnitDetail> = {}) =>
    unit({
      activeState: "failed",
      subState: "failed",
      result: "timeout",
      mainPid: 0,
      mainProcess: null,
      processes: [],
      timeoutStartUsec: 30_000_000,
      stateChangeUsec: usec(ago(10)),
      ...overrides,
    });

  it("start timed out in ExecStartPre (start-pre → stop-sigterm → failed)", () => {
    const recent = transitions("inactive/dead", [
      [ago(40), "activating/start-pre", { controlPid: 5210 }],
      [ago(10), "deactivating/stop-sigterm", { result: "timeout" }],
      [ago(10) + 5, "failed/failed", { result: "timeout" }],
    ]);
    const d = diagnose(
      facts({
        unit: timedOut(),
        recentTransitions: recent,
        journal: [systemdLine(ago(10), "vllm-kimi-k25.service: start-pre operation timed out. Terminating.")],
      }),
    );
    expect(d.code).toBe("start-timeout");
    expect(d.severity).toBe("critical");
    expect(d.headline).toMatch(
      /^Start timed out 10 s ago: ExecStartPre `\/bin\/bash -c .*` was still running when TimeoutStartSec=30 s ran out, so systemd stopped it\.$/,
    );
    expect(d.nextStep?.text).toMatch(/TimeoutStartSec/);
  });

  it("adds the GPU memory the ExecStartPre was waiting for when it is still held", () => {
    const recent = transitions("inactive/dead", [
      [ago(40), "activating/start-pre"],
      [ago(10), "deactivating/stop-sigterm", { result: "timeout" }],
      [ago(10), "failed/failed", { result: "timeout" }],
    ]);
    const f = steadyFacts(timedOut(), () => steadyGpus(() => [holder("exited", 4121, 50 * GIB, { exitedAtMs: ago(120) })]), { recentTransitions: recent });
    const d = diagnose(f);
    expect(d.code).toBe("start-timeout");
    expect(d.headline).toContain("it polls nvidia-smi, and 400 GiB of GPU memory is still held on GPUs 0–7 (by exited process 4121 of vllm-kimi-k25.service)");
  });

  it("start timed out waiting for readiness (activating/start)", () => {
    const recent = transitions("inactive/dead", [
      [ago(40), "activating/start-pre"],
      [ago(38), "activating/start", { mainPid: 4200 }],
      [ago(8), "deactivating/stop-sigterm", { result: "timeout" }],
      [ago(8), "failed/failed", { result: "timeout" }],
    ]);
    const d = diagnose(facts({ unit: timedOut({ stateChangeUsec: usec(ago(8)) }), recentTransitions: recent }));
    expect(d.code).toBe("start-timeout");
    expect(d.headline).toMatch(/^Start timed out 8 s ago: ExecStart `\/opt\/vllm\/bin\/vllm serve .*` was still running when TimeoutStartSec=30 s ran out/);
  });

  it("stop timed out (active → stop-sigterm → final-sigkill → failed)", () => {
    const recent = transitions("inactive/dead", [
      [ago(3600), "active/running", { mainPid: 4121 }],
      [ago(100), "deactivating/stop-sigterm"],
      [ago(10), "deactivating/final-sigkill", { result: "timeout" }],
      [ago(9), "failed/failed", { result: "timeout" }],
    ]);
    const d = diagnose(facts({ unit: timedOut({ stateChangeUsec: usec(ago(9)) }), recentTransitions: recent }));
    expect(d.code).toBe("stop-timeout");
    expect(d.headline).toBe(
      "Stop timed out 9 s ago: stopping took longer than TimeoutStopSec=1 min 30 s (went through stop-sigterm → final-sigkill), so systemd killed it and marked it failed.",
    );
  });
});

// ---------------------------------------------------------------------------------------
describe("case 6 — crash loop, then start limit", () => {
  /**
   * `count` Restart=on-failure cycles starting `startAgoS` ago: active/running for upS, then
   * failed/failed → activating/auto-restart, RestartSec=restartS later inactive/dead → active.
   * The last cycle ends in activating/auto-restart.
   */
  function cycles(count: number, startAgoS: number, upS = 3, restartS = 5) {
    const steps: Parameters<typeof transitions>[1] = [];
    let at = ago(startAgoS);
    let lastActiveMs = at;
    let lastFailMs = at;
    for (let i = 0; i < count; i++) {
      lastActiveMs = at;
      steps.push([at, "active/running", { mainPid: 4300 + i, nRestarts: i }]);
      at += upS * 1000;
      lastFailMs = at;
      steps.push([at, "failed/failed", { result: "exit-code", inRestartCycle: true, nRestarts: i }]);
      steps.push([at + 1, "activating/auto-restart", { result: "exit-code", inRestartCycle: true, nRestarts: i }]);
      if (i < count - 1) {
        at += restartS * 1000;
        steps.push([at - 1, "inactive/dead", { inRestartCycle: true, nRestarts: i + 1 }]);
      }
    }
    return { recent: transitions("inactive/dead", steps), lastActiveMs, lastFailMs, autoRestartMs: lastFailMs + 1 };
  }
  const crashJournal = (failMs: number) => [
    line(failMs - 500, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", { priority: 3 }),
    systemdLine(failMs, "Main process exited, code=exited, status=1/FAILURE"),
    systemdLine(failMs, "Failed with result 'exit-code'."),
  ];
  const looping = (c: ReturnType<typeof cycles>, overrides: Partial<UnitDetail> = {}) =>
    unit({
      activeState: "activating",
      subState: "auto-restart",
      result: "exit-code",
      restart: "on-failure",
      restartUsec: 5_000_000,
      nRestarts: 3,
      mainPid: 0,
      mainProcess: null,
      processes: [],
      execMainCode: 1,
      execMainStatus: 1,
      execMainStartUsec: usec(c.lastActiveMs),
      execMainExitUsec: usec(c.lastFailMs),
      stateChangeUsec: usec(c.autoRestartMs),
      timestamps: {
        inactiveExitUsec: usec(c.lastActiveMs),
        activeEnterUsec: usec(c.lastActiveMs),
        activeExitUsec: usec(c.lastFailMs),
        inactiveEnterUsec: usec(c.lastFailMs),
      },
      ...overrides,
    });

  it("in activating/auto-restart: counts restarts, gives the last failure and the next restart", () => {
    const c = cycles(4, 29); // last failure 2 s ago
    const d = diagnose(facts({ unit: looping(c, { nRestarts: 3 }), recentTransitions: c.recent, journal: crashJournal(c.lastFailMs) }));
    expect(d.code).toBe("crash-loop");
    expect(d.severity).toBe("critical");
    expect(d.headline).toBe(
      "Crash loop: the main process exited with code 1 (generic failure) 3 s after the unit became active; restarted 4 times in 26 s, next restart in 3 s.",
    );
    expect(d.etaMs).toBeCloseTo(3_000, -1);
    expect(d.nextStep?.action).toEqual({ kind: "stop", unit: UNIT });
    expect(evidence(d, "Restart")?.value).toBe("on-failure, RestartSec=5 s");
    expect(evidence(d, "Start limit")?.value).toBe("5 starts per 10 s");
    expect(evidence(d, "NRestarts")?.value).toBe("3");
    expect(values(d)).toContain("CUDA out of memory");
  });

  it("a transient failed/failed inside a Restart= cycle is not called final", () => {
    const c = cycles(3, 20);
    const recent = c.recent.slice(0, -1); // ends on failed/failed (inRestartCycle)
    const d = diagnose(
      facts({ unit: looping(c, { activeState: "failed", subState: "failed", stateChangeUsec: usec(c.lastFailMs) }), recentTransitions: recent }),
    );
    expect(d.code).toBe("crash-loop");
    expect(d.headline).toMatch(/^Crash loop: the main process exited with code 1 .*; restarted 3 times in \d+ s, restarting now\.$/);
  });

  it("first automatic restart only: a warning, not yet a loop", () => {
    const c = cycles(1, 5);
    const d = diagnose(facts({ unit: looping(c, { nRestarts: 0 }), recentTransitions: c.recent, journal: crashJournal(c.lastFailMs) }));
    expect(d.code).toBe("auto-restart-pending");
    expect(d.severity).toBe("warning");
    expect(d.headline).toBe(
      "The main process exited with code 1 (generic failure) 3 s after the unit became active; systemd restarts it — next restart in 3 s (Restart=on-failure).",
    );
  });

  it("Result=start-limit-hit: suggests reset-failed", () => {
    const c = cycles(5, 41);
    const recent = [...c.recent, ...transitions("activating/auto-restart", [[ago(1), "failed/failed", { result: "start-limit-hit" }]])];
    const u = looping(c, { activeState: "failed", subState: "failed", result: "start-limit-hit", nRestarts: 5, stateChangeUsec: usec(ago(1)) });
    const journal = [...crashJournal(c.lastFailMs), systemdLine(ago(1), "vllm-kimi-k25.service: Start request repeated too quickly.")];
    const d = diagnose(facts({ unit: u, recentTransitions: recent, journal }));
    expect(d.code).toBe("start-limit-hit");
    expect(d.severity).toBe("critical");
    expect(d.headline).toBe(
      "Start limit hit: systemd gave up after it restarted 5 times in 38 s (StartLimitBurst=5 per 10 s); " +
        "the last attempt failed because the main process exited with code 1 (generic failure) 3 s after the unit became active.",
    );
    expect(d.nextStep?.action).toEqual({ kind: "reset-failed", unit: UNIT });
    expect(values(d)).toContain("Start request repeated too quickly");
  });

  it("failed after the burst with Result=exit-code and NRestarts=3 (as seen on systemd 252)", () => {
    const c = cycles(3, 20);
    // the last cycle's failure is final: no auto-restart follows it
    const recent = c.recent.slice(0, -2).concat(transitions("active/running", [[c.lastFailMs, "failed/failed", { result: "exit-code", nRestarts: 3 }]]));
    const u = looping(c, { activeState: "failed", subState: "failed", nRestarts: 3, startLimitBurst: 3, stateChangeUsec: usec(c.lastFailMs) });
    const d = diagnose(facts({ unit: u, recentTransitions: recent }));
    expect(d.code).toBe("start-limit-hit");
    expect(d.nextStep?.action?.kind).toBe("reset-failed");
  });

  it("a final failure without Restart= is an ordinary failure, not a start limit", () => {
    const recent = transitions("inactive/dead", [
      [ago(10), "active/running", { mainPid: 4300 }],
      [ago(7), "failed/failed", { result: "exit-code" }],
    ]);
    const u = unit({
      activeState: "failed",
      subState: "failed",
      result: "exit-code",
      restart: "no",
      mainPid: 0,
      mainProcess: null,
      execMainCode: 1,
      execMainStatus: 1,
      execMainExitUsec: usec(ago(7)),
      stateChangeUsec: usec(ago(7)),
    });
    expect(diagnose(facts({ unit: u, recentTransitions: recent })).code).toBe("exited-after-start");
  });

  it("running again but restarted several times recently: flags flapping", () => {
    const c = cycles(3, 30);
    const recent = [
      ...c.recent,
      ...transitions("activating/auto-restart", [
        [ago(4) - 1, "inactive/dead"],
        [ago(4), "active/running", { mainPid: 4400 }],
      ]),
    ];
    const u = looping(c, {
      activeState: "active",
      subState: "running",
      mainPid: 4400,
      mainProcess: proc(4400, VLLM_ARGV),
      stateChangeUsec: usec(ago(4)),
      timestamps: { inactiveExitUsec: usec(ago(4)), activeEnterUsec: usec(ago(4)), activeExitUsec: usec(c.lastFailMs), inactiveEnterUsec: usec(ago(4)) },
    });
    const d = diagnose(facts({ unit: u, recentTransitions: recent }));
    expect(d.code).toBe("crash-loop");
    expect(d.severity).toBe("warning");
    expect(d.headline).toMatch(
      /^Running for 4 s, but it restarted 3 times in 27 s \(last failure: the main process exited with code 1 .*\); it may be crash-looping\.$/,
    );
  });
});

// ---------------------------------------------------------------------------------------
describe("case 7 — main process exited soon after becoming active", () => {
  const died = (code: number, status: number, ranS: number, overrides: Partial<UnitDetail> = {}) => {
    const activeAt = ago(20 + ranS);
    return {
      unit: unit({
        activeState: "failed",
        subState: "failed",
        result: code === 1 ? "exit-code" : code === 2 ? "signal" : "core-dump",
        mainPid: 0,
        mainProcess: null,
        processes: [],
        execStartPre: [],
        execMainCode: code,
        execMainStatus: status,
        execMainStartUsec: usec(activeAt),
        execMainExitUsec: usec(ago(20)),
        stateChangeUsec: usec(ago(20)),
        timestamps: { inactiveExitUsec: usec(activeAt), activeEnterUsec: usec(activeAt), activeExitUsec: usec(ago(20)), inactiveEnterUsec: usec(ago(20)) },
        ...overrides,
      }),
      recentTransitions: transitions("inactive/dead", [
        [activeAt, "active/running", { mainPid: 4500 }],
        [ago(20), "failed/failed", { result: code === 1 ? "exit-code" : "signal" }],
      ]),
    };
  };

  it("killed by a signal: names the signal and how long it ran", () => {
    const d = diagnose(facts({ ...died(2, 9, 3), journal: [line(ago(21), "INFO Loading safetensors checkpoint shards: 12% Completed")] }));
    expect(d.code).toBe("exited-after-start");
    expect(d.severity).toBe("critical");
    expect(d.headline).toBe("Failed 20 s ago: the main process was killed by SIGKILL 3 s after the unit became active.");
    expect(values(d)).toContain("Loading safetensors checkpoint shards");
    expect(evidence(d, "ExecStart")?.value).toContain("/opt/vllm/bin/vllm serve");
  });

  it("exit code", () => {
    const d = diagnose(facts(died(1, 1, 2)));
    expect(d.headline).toBe("Failed 20 s ago: the main process exited with code 1 (generic failure) 2 s after the unit became active.");
  });

  it("core dump", () => {
    const d = diagnose(facts(died(3, 11, 1)));
    expect(d.headline).toContain("dumped core (SIGSEGV) 1 s after the unit became active");
  });

  it("exit code from the journal when ExecMain* is not filled in", () => {
    const f = died(0, 0, 5, { execMainExitUsec: 0 });
    const d = diagnose(facts({ ...f, journal: [systemdLine(ago(20), "vllm-kimi-k25.service: Main process exited, code=killed, status=6/ABRT")] }));
    expect(d.headline).toContain("the main process was killed by SIGABRT 5 s after the unit became active");
  });

  it("a main process that ran for hours is 'main-exited', not 'soon after start'", () => {
    const d = diagnose(facts(died(1, 1, 5 * 3600)));
    expect(d.code).toBe("main-exited");
    expect(d.headline).toContain("5 h after the unit became active");
  });

  it("OOM killer (host RAM)", () => {
    const f = died(2, 9, 30, { result: "oom-kill" });
    f.recentTransitions[f.recentTransitions.length - 1].result = "oom-kill";
    const d = diagnose(facts(f));
    expect(d.code).toBe("oom-killed");
    expect(d.headline).toContain("OOM killer");
  });
});

// ---------------------------------------------------------------------------------------
describe("case 8 — load state and dependencies", () => {
  it("unit unknown to systemd (null detail)", () => {
    const d = diagnose(facts({ unit: null, requestedName: "vllm-typo.service" }));
    expect(d.code).toBe("not-found");
    expect(d.severity).toBe("critical");
    expect(d.headline).toContain("systemd has no unit named vllm-typo.service");
  });

  it("LoadState=not-found", () => {
    const d = diagnose(facts({ unit: unit({ loadState: "not-found", activeState: "inactive", subState: "dead", fragmentPath: "" }) }));
    expect(d.code).toBe("not-found");
  });

  it("masked", () => {
    const d = diagnose(facts({ unit: unit({ loadState: "masked", unitFileState: "masked", activeState: "inactive", subState: "dead" }) }));
    expect(d.code).toBe("masked");
    expect(d.headline).toContain("systemctl unmask vllm-kimi-k25.service");
  });

  it("bad-setting: quotes systemd's complaint", () => {
    const journal = [
      systemdLine(ago(5), "/etc/systemd/system/vllm-kimi-k25.service:9: Unknown key name 'ExecStartt' in section 'Service', ignoring.", { priority: 4 }),
      systemdLine(ago(5), "vllm-kimi-k25.service: Service has no ExecStart=, ExecStop=, or SuccessAction=. Refusing.", { priority: 3 }),
    ];
    const d = diagnose(facts({ unit: unit({ loadState: "bad-setting", activeState: "inactive", subState: "dead" }), journal }));
    expect(d.code).toBe("bad-setting");
    expect(d.headline).toContain("Service has no ExecStart=");
    expect(values(d)).toContain("Unknown key name 'ExecStartt'");
    expect(d.nextStep?.text).toContain("/etc/systemd/system/vllm-kimi-k25.service");
  });

  it("LoadState=error", () => {
    const d = diagnose(facts({ unit: unit({ loadState: "error", activeState: "inactive", subState: "dead" }) }));
    expect(d.code).toBe("load-error");
  });

  it("still running after its unit file was removed", () => {
    const d = diagnose(facts({ unit: unit({ loadState: "not-found" }) }));
    expect(d.code).toBe("unit-file-gone");
    expect(d.severity).toBe("warning");
  });

  const inactiveUnit = () =>
    unit({
      activeState: "inactive",
      subState: "dead",
      mainPid: 0,
      mainProcess: null,
      processes: [],
      stateChangeUsec: usec(ago(3600)),
      timestamps: { inactiveExitUsec: usec(ago(7200)), activeEnterUsec: usec(ago(7190)), activeExitUsec: usec(ago(3600)), inactiveEnterUsec: usec(ago(3600)) },
    });

  it("dependency failed (journal line with JOB_RESULT=dependency)", () => {
    const journal = [systemdLine(ago(30), "Dependency failed for vllm-kimi-k25.service - vLLM Kimi K2.5.", { priority: 3, jobResult: "dependency" })];
    const d = diagnose(facts({ unit: inactiveUnit(), journal }));
    expect(d.code).toBe("dependency-failed");
    expect(d.severity).toBe("critical");
    expect(d.headline).toMatch(/^Not started 30 s ago because a unit it requires failed to start/);
    expect(values(d)).toContain("Dependency failed for");
  });

  it("dependency failed (job event only)", () => {
    const d = diagnose(
      facts({ unit: inactiveUnit(), recentJobs: [{ jobId: 812, unit: UNIT, jobType: "start", phase: "finished", result: "dependency", atMs: ago(12) }] }),
    );
    expect(d.code).toBe("dependency-failed");
    expect(evidence(d, "Start job")?.value).toBe('#812 start finished with result "dependency"');
  });

  it("an old dependency failure is superseded by a later start", () => {
    const journal = [systemdLine(ago(9000), "Dependency failed for vllm-kimi-k25.service - vLLM Kimi K2.5.")];
    expect(diagnose(facts({ unit: inactiveUnit(), journal })).code).toBe("stopped");
  });
});

describe("case 8 — naming the failed dependency", () => {
  const REQUIRES = ["models-nfs.mount", "vllm-weights-sync.service", "system.slice", "sysinit.target"];
  const dependencyLine = () => [
    systemdLine(ago(30), "Dependency failed for vllm-kimi-k25.service - vLLM Kimi K2.5.", { priority: 3, jobResult: "dependency" }),
  ];
  const inactive = (requires = REQUIRES) =>
    unit({
      activeState: "inactive",
      subState: "dead",
      mainPid: 0,
      mainProcess: null,
      processes: [],
      requires,
      stateChangeUsec: usec(ago(3600)),
      timestamps: { inactiveExitUsec: usec(ago(7200)), activeEnterUsec: usec(ago(7190)), activeExitUsec: usec(ago(3600)), inactiveEnterUsec: usec(ago(3600)) },
    });
  const dep = (name: string, state: string, over: Partial<DependencyState> = {}): DependencyState => {
    const [activeState, subState] = state.split("/");
    return { name, loadState: "loaded", activeState, subState, result: "success", manageable: false, ...over };
  };
  const up = () => [
    dep("models-nfs.mount", "active/mounted"),
    dep("vllm-weights-sync.service", "active/exited", { manageable: true }),
    dep("system.slice", "active/active"),
    dep("sysinit.target", "active/active"),
  ];
  const withDeps = (dependencies: DependencyState[] | undefined, u = inactive()) => diagnose(facts({ unit: u, journal: dependencyLine(), dependencies }));
  const replace = (list: DependencyState[], d: DependencyState) => list.map((x) => (x.name === d.name ? d : x));

  it("names a failed dependency in the allow-list and offers to open it", () => {
    const d = withDeps(replace(up(), dep("vllm-weights-sync.service", "failed/failed", { result: "exit-code", manageable: true })));
    expect(d.code).toBe("dependency-failed");
    expect(d.severity).toBe("critical");
    expect(d.headline).toBe(
      "Not started 30 s ago because vllm-weights-sync.service, which it requires, failed (result exit-code); the problem is in that unit, not in this one.",
    );
    expect(d.nextStep).toEqual({
      text: "Open vllm-weights-sync.service, fix why it failed, then start this one again.",
      action: { kind: "open-unit", unit: "vllm-weights-sync.service" },
    });
    expect(evidence(d, "Requires")?.value).toBe("vllm-weights-sync.service: failed, result exit-code");
    expect(evidence(d, "Other required units")?.value).toBe("models-nfs.mount is active (mounted), system.slice is active and sysinit.target is active");
    expect(values(d)).toContain("Dependency failed for"); // the journal line stays
  });

  it("a failed dependency outside the allow-list is named, with systemctl instead of a button", () => {
    const d = withDeps(replace(up(), dep("models-nfs.mount", "failed/failed", { result: "exit-code" })));
    expect(d.headline).toMatch(/^Not started 30 s ago because models-nfs\.mount, which it requires, failed \(result exit-code\);/);
    expect(d.nextStep?.action).toBeUndefined();
    expect(d.nextStep?.text).toBe(
      "Check models-nfs.mount with `systemctl status models-nfs.mount` and `journalctl -u models-nfs.mount` (it is not among this agent's units), fix it, then start this one again.",
    );
    expect(evidence(d, "Requires")?.value).toBe("models-nfs.mount: failed, result exit-code, not among this agent's units");
  });

  it("a dependency that cannot load (not-found, masked, bad unit file)", () => {
    const missing = withDeps(replace(up(), dep("models-nfs.mount", "inactive/dead", { loadState: "not-found", result: "" })));
    expect(missing.headline).toContain("because models-nfs.mount, which it requires, does not exist (LoadState=not-found);");
    expect(evidence(missing, "Requires")?.value).toBe("models-nfs.mount: inactive (dead), LoadState=not-found, not among this agent's units");
    const masked = withDeps(replace(up(), dep("vllm-weights-sync.service", "inactive/dead", { loadState: "masked", manageable: true })));
    expect(masked.headline).toContain("because vllm-weights-sync.service, which it requires, is masked;");
    expect(masked.nextStep?.action).toEqual({ kind: "open-unit", unit: "vllm-weights-sync.service" });
  });

  it("several failed dependencies: all named, the first one's step", () => {
    const d = withDeps(
      replace(
        replace(up(), dep("models-nfs.mount", "failed/failed", { result: "timeout" })),
        dep("vllm-weights-sync.service", "failed/failed", { result: "exit-code", manageable: true }),
      ),
    );
    expect(d.headline).toBe(
      "Not started 30 s ago because units it requires cannot run: models-nfs.mount failed (result timeout) and vllm-weights-sync.service failed (result exit-code); the problem is in those units, not in this one.",
    );
    expect(d.evidence.filter((e) => e.label === "Requires").map((e) => e.value.split(":")[0])).toEqual(["models-nfs.mount", "vllm-weights-sync.service"]);
    // the first one is outside the allow-list: no button, even though the second is inside it
    expect(d.nextStep?.action).toBeUndefined();
    expect(d.nextStep?.text).toMatch(/^Check models-nfs\.mount with `systemctl status models-nfs\.mount`/);
  });

  it("a failed dependency wins over one that merely is not running (a chain: its own start was cancelled)", () => {
    const chain = withDeps(replace(up(), dep("vllm-weights-sync.service", "inactive/dead", { manageable: true })));
    expect(chain.headline).toContain("because vllm-weights-sync.service, which it requires, is inactive (dead);");
    expect(chain.nextStep).toEqual({
      text: "Open vllm-weights-sync.service, fix why it is not running, then start this one again.",
      action: { kind: "open-unit", unit: "vllm-weights-sync.service" },
    });
    const both = withDeps(
      replace(
        replace(up(), dep("vllm-weights-sync.service", "inactive/dead", { manageable: true })),
        dep("models-nfs.mount", "failed/failed", { result: "exit-code" }),
      ),
    );
    expect(both.headline).toContain("because models-nfs.mount, which it requires, failed (result exit-code);");
    expect(evidence(both, "Other required units")?.value).toContain("vllm-weights-sync.service is inactive (dead)");
  });

  it("every dependency is up again: says so and offers to start it", () => {
    const d = withDeps(up());
    expect(d.code).toBe("dependency-failed");
    expect(d.severity).toBe("warning");
    expect(d.headline).toBe(
      'Not started 30 s ago because a unit it requires failed to start (job result "dependency"); the units it requires are up now (models-nfs.mount, vllm-weights-sync.service, system.slice and 1 more), so starting it again should work.',
    );
    expect(d.nextStep).toEqual({ text: "Start it again.", action: { kind: "start", unit: UNIT } });
  });

  it("all checked ones up but some not checked: no promise, the generic advice", () => {
    const many = [...REQUIRES, ...Array.from({ length: 20 }, (_, i) => `extra-${i}.service`)];
    const d = withDeps(up(), inactive(many));
    expect(d.headline).toMatch(
      /^Not started 30 s ago because a unit it requires failed to start \(job result "dependency"\); the problem is in that unit, not in this one\.$/,
    );
    expect(d.nextStep?.action).toBeUndefined();
    expect(evidence(d, "Not checked")?.value).toBe(
      "extra-0.service, extra-1.service, extra-2.service, extra-3.service, extra-4.service, extra-5.service and 14 more",
    );
  });

  it("without dependency facts (or none readable) the diagnosis stays as before", () => {
    for (const dependencies of [undefined, []]) {
      const d = withDeps(dependencies);
      expect(d.headline).toBe(
        'Not started 30 s ago because a unit it requires failed to start (job result "dependency"); the problem is in that unit, not in this one.',
      );
      expect(d.nextStep).toEqual({
        text: "Check the units this one Requires=/BindsTo= (`systemctl list-dependencies`), fix the failed one, then start this one.",
      });
    }
  });

  it("dependency facts never turn another diagnosis into dependency-failed", () => {
    const failedDep = [dep("models-nfs.mount", "failed/failed", { result: "exit-code" })];
    expect(diagnose(facts({ unit: inactive(), dependencies: failedDep })).code).toBe("stopped");
    expect(diagnose(facts({ dependencies: failedDep })).code).toBe("healthy");
  });

  it("a button only ever points at this unit or at a dependency marked manageable", () => {
    const states = ["failed/failed", "inactive/dead", "active/running", "activating/start-pre"];
    const loads = ["loaded", "not-found", "masked"];
    for (const s1 of states)
      for (const s2 of states)
        for (const load of loads)
          for (const manageable of [false, true]) {
            const deps = [
              dep("models-nfs.mount", s1, { loadState: load }),
              dep("vllm-weights-sync.service", s2, { manageable }),
              dep("system.slice", "active/active"),
            ];
            const d = withDeps(deps, inactive(deps.map((x) => x.name)));
            const target = d.nextStep?.action?.unit;
            if (target === undefined || target === UNIT) continue;
            expect(deps.find((x) => x.name === target)?.manageable, `${s1} ${s2} ${load} ${manageable}: ${target}`).toBe(true);
          }
  });
});

// ---------------------------------------------------------------------------------------
describe("case 9 — stop stuck in stop-sigterm", () => {
  const stopping = (secondsAgo: number, overrides: Partial<UnitDetail> = {}) =>
    unit({ activeState: "deactivating", subState: "stop-sigterm", stateChangeUsec: usec(ago(secondsAgo)), ...overrides });

  it("ignoring SIGTERM for 45 s: how long, and time until SIGKILL", () => {
    const d = diagnose(facts({ unit: stopping(45) }));
    expect(d.code).toBe("stop-stuck");
    expect(d.severity).toBe("warning");
    expect(d.headline).toBe("Stop stuck: PID 4121 (vllm) has ignored SIGTERM for 45 s; systemd sends SIGKILL in 45 s.");
    expect(d.etaMs).toBe(45_000);
    expect(d.nextStep?.text).toContain("systemctl kill -s SIGKILL vllm-kimi-k25.service");
  });

  it("a fresh stop is just 'stopping'", () => {
    const d = diagnose(facts({ unit: stopping(1) }));
    expect(d.code).toBe("stopping");
    expect(d.severity).toBe("info");
    expect(d.headline).toBe("Stopping: SIGTERM sent 1 s ago, waiting for PID 4121 (vllm) to exit; systemd sends SIGKILL in 1 min 29 s.");
  });

  it("TimeoutStopSec=infinity: no SIGKILL will come", () => {
    const d = diagnose(facts({ unit: stopping(300, { timeoutStopUsec: UINT64_MAX }) }));
    expect(d.severity).toBe("critical");
    expect(d.headline).toContain("no SIGKILL will follow (TimeoutStopSec=infinity)");
    expect(d.etaMs).toBeUndefined();
  });

  it("process in D state", () => {
    const d = diagnose(facts({ unit: stopping(30, { mainProcess: proc(4121, VLLM_ARGV, { state: "uninterruptible" }) }) }));
    expect(d.severity).toBe("critical");
    expect(d.headline).toContain("D state");
  });

  it("SIGKILL sent and the process is still there", () => {
    const d = diagnose(facts({ unit: stopping(12, { subState: "stop-sigkill" }) }));
    expect(d.code).toBe("stop-stuck");
    expect(d.severity).toBe("critical");
    expect(d.headline).toMatch(/^Stop stuck: SIGKILL sent 12 s ago but PID 4121 \(vllm\) is still there/);
  });

  it("tearing down after a start timeout says why", () => {
    const recent = transitions("inactive/dead", [
      [ago(40), "activating/start-pre"],
      [ago(10), "deactivating/stop-sigterm", { result: "timeout" }],
    ]);
    const u = stopping(10, { result: "timeout", mainPid: 0, mainProcess: null, processes: [proc(5210, WAIT_GPU_ARGV, { state: "sleeping" })] });
    const d = diagnose(facts({ unit: u, recentTransitions: recent }));
    expect(d.headline).toMatch(
      /^Start timed out in ExecStartPre; Stop stuck: PID 5210 \(bash\) has ignored SIGTERM for 10 s; systemd sends SIGKILL in 1 min 20 s\.$/,
    );
  });

  it("ExecStop running", () => {
    const stopArgv = ["/usr/local/bin/drain-requests"];
    const d = diagnose(facts({ unit: stopping(2, { subState: "stop", controlPid: 6001, controlProcess: proc(6001, stopArgv) }) }));
    expect(d.code).toBe("stopping");
    expect(d.headline).toBe("Stopping: ExecStop running for 2 s: `/usr/local/bin/drain-requests`; systemd moves on (SIGTERM) in 1 min 28 s.");
  });
});

// ---------------------------------------------------------------------------------------
describe("case 10 — healthy", () => {
  it("running, with uptime", () => {
    const d = diagnose(facts());
    expect(d.code).toBe("healthy");
    expect(d.severity).toBe("ok");
    expect(d.headline).toBe("Running normally for 3 h 12 min (since 2025-05-01 00:00:00 UTC).");
    expect(d.nextStep).toBeUndefined();
  });

  it("shows the GPU memory the unit uses", () => {
    const gpus = steadyGpus(() => [holder("unit", 4121, 74 * GIB)]);
    const d = diagnose(facts({ gpuNow: sample(NOW, gpus) }));
    expect(evidence(d, "GPU memory")?.value).toBe("592 GiB on GPUs 0–7");
  });

  it("oneshot with RemainAfterExit", () => {
    const d = diagnose(facts({ unit: unit({ subState: "exited", mainPid: 0, mainProcess: null }) }));
    expect(d.code).toBe("healthy");
    expect(d.headline).toMatch(/^Ran successfully 3 h 12 min ago and stays active/);
  });

  it("old restarts long ago do not make a healthy unit flap", () => {
    const recent = transitions("inactive/dead", [
      [ago(7 * 3600), "activating/auto-restart", { inRestartCycle: true }],
      [ago(7 * 3600 - 1), "activating/auto-restart", { inRestartCycle: true }],
      [ago(3 * 3600 + 12 * 60), "active/running"],
    ]);
    expect(diagnose(facts({ recentTransitions: recent })).code).toBe("healthy");
  });
});

// ---------------------------------------------------------------------------------------
describe("other states", () => {
  // Seen on systemd 252 (e2e/diagnosis): a child systemd has forked but not yet exec'd shows
  // systemd's own argv area, rewritten to "(sleep)" and padded with empty strings.
  const preExec = ["(sleep)", ...Array.from({ length: 40 }, () => "")];

  it("a control process caught before its exec: the ExecStartPre line from the unit file", () => {
    const u = startPreUnit(0.2, {
      execStartPre: [cmd("/bin/sleep", "30")],
      controlProcess: proc(5210, preExec, { startedAtMs: ago(0.2) }),
      processes: [proc(5210, preExec, { startedAtMs: ago(0.2) })],
    });
    const d = diagnose(facts({ unit: u }));
    expect(d.code).toBe("start-pre-running");
    expect(d.headline).toMatch(/^ExecStartPre running for <1 s: `\/bin\/sleep 30` — TimeoutStartSec in 2 min\.$/);
    expect(evidence(d, "ExecStartPre")).toEqual({ label: "ExecStartPre", value: "PID 5210, running <1 s: /bin/sleep 30", source: "systemd" });
  });

  it("a main process caught before its exec", () => {
    const d = diagnose(facts({ unit: unit({ mainProcess: proc(4121, preExec) }) }));
    expect(evidence(d, "Main process")?.value).toBe("PID 4121 (sleeping): (sleep) (being spawned by systemd)");
  });

  it("inactive/dead: stopped since …, nothing wrong, offers start", () => {
    const u = unit({
      activeState: "inactive",
      subState: "dead",
      mainPid: 0,
      mainProcess: null,
      processes: [],
      stateChangeUsec: usec(ago(7200)),
      execMainCode: 1,
      execMainStatus: 0,
      execMainExitUsec: usec(ago(7200)),
      timestamps: { inactiveExitUsec: usec(ago(9000)), activeEnterUsec: usec(ago(8990)), activeExitUsec: usec(ago(7200)), inactiveEnterUsec: usec(ago(7200)) },
    });
    const d = diagnose(facts({ unit: u }));
    expect(d.code).toBe("stopped");
    expect(d.severity).toBe("info");
    expect(d.headline).toBe("Stopped 2 h ago (since 2025-05-01 01:12:00 UTC); nothing is wrong, it is just not running.");
    expect(d.nextStep?.action).toEqual({ kind: "start", unit: UNIT });
    expect(evidence(d, "Last exit")?.value).toMatch(/exited with code 0/);
  });

  it("never started", () => {
    const u = unit({
      activeState: "inactive",
      subState: "dead",
      stateChangeUsec: 0,
      execMainStartUsec: 0,
      timestamps: { inactiveExitUsec: 0, activeEnterUsec: 0, activeExitUsec: 0, inactiveEnterUsec: 0 },
    });
    expect(diagnose(facts({ unit: u })).headline).toBe("Not running and not started since systemd loaded it; nothing is wrong.");
  });

  it("start job queued behind ordering dependencies", () => {
    const u = unit({ activeState: "inactive", subState: "dead", job: { id: 77, type: "start" } });
    const d = diagnose(facts({ unit: u, job: { id: 77, type: "start" } }));
    expect(d.code).toBe("start-queued");
    expect(d.headline).toContain("start job (#77) is queued");
  });

  it("activating/start: waiting for readiness", () => {
    const u = unit({ activeState: "activating", subState: "start", stateChangeUsec: usec(ago(25)) });
    const d = diagnose(facts({ unit: u }));
    expect(d.code).toBe("start-running");
    expect(d.headline).toBe("Started for 25 s: waiting for PID 4121 to report ready (Type=notify/forking) — TimeoutStartSec in 1 min 35 s.");
    expect(d.etaMs).toBe(95_000);
  });

  it("reloading", () => {
    expect(diagnose(facts({ unit: unit({ activeState: "reloading", subState: "reload", stateChangeUsec: usec(ago(3)) }) })).code).toBe("reloading");
  });

  it("unknown state pair", () => {
    const d = diagnose(facts({ unit: unit({ activeState: "refreshing", subState: "weird", stateChangeUsec: usec(ago(3)) }) }));
    expect(d.code).toBe("unknown-state");
    expect(d.headline).toBe("State refreshing (weird) for 3 s: gpudeck has no diagnosis for this state.");
  });

  it("ignores transitions of other units", () => {
    const other = transitions("active/running", [[ago(5), "failed/failed", { result: "exit-code", inRestartCycle: true }]], "other.service");
    expect(diagnose(facts({ recentTransitions: other })).code).toBe("healthy");
  });
});
