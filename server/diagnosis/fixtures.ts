/**
 * Small factories for diagnosis facts, used by the tests here and reusable by the panel's tests
 * (realistic shapes of what the agent collects; times relative to a fixed NOW).
 */
import type { ExecCommand, GpuAttributed, GpuHolder, GpuSample, JournalEntry, ProcessInfo, UnitDetail, UnitStatePair, UnitTransition } from "../contract/types";
import type { DiagnosisFacts } from "./types";
import type { Diagnosis } from "../contract/diagnosis";

/** 2025-05-01 03:12:00 UTC — the middle of the night, as incidents go. */
export const NOW = Date.UTC(2025, 4, 1, 3, 12, 0);
export const UNIT = "vllm-kimi-k25.service";
export const GIB = 1024; // MiB
export const H200_MIB = 143_771;

export const ago = (seconds: number): number => NOW - seconds * 1000;
export const usec = (ms: number): number => Math.round(ms * 1000);
export const UINT64_MAX = 18446744073709551615; // as systemd's "infinity" arrives in JS

export function cmd(...argv: string[]): ExecCommand {
  return { path: argv[0], argv, ignoreErrors: false };
}

export function proc(pid: number, cmdline: string[], extra: Partial<ProcessInfo> = {}): ProcessInfo {
  return { pid, state: "sleeping", cmdline, ...extra };
}

export const VLLM_ARGV = ["/opt/vllm/bin/vllm", "serve", "moonshotai/Kimi-K2.5", "--tensor-parallel-size", "8", "--port", "8000"];
/** The incident's ExecStartPre: poll nvidia-smi until the GPUs are nearly empty. */
export const WAIT_GPU_ARGV = [
  "/bin/bash",
  "-c",
  'while [ "$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | sort -n | tail -1)" -gt 2000 ]; do echo "waiting for GPU memory"; sleep 1; done',
];

export function pair(text: string): UnitStatePair {
  const [activeState, subState] = text.split("/");
  return { activeState, subState: subState ?? activeState };
}

/** A healthy, loaded Type=simple vLLM unit; override what the case needs. */
export function unit(overrides: Partial<UnitDetail> = {}): UnitDetail {
  return {
    name: UNIT,
    description: "vLLM Kimi K2.5",
    loadState: "loaded",
    unitFileState: "enabled",
    activeState: "active",
    subState: "running",
    result: "success",
    mainPid: 4121,
    controlPid: 0,
    nRestarts: 0,
    stateChangeUsec: usec(ago(3 * 3600 + 12 * 60)),
    job: null,
    fragmentPath: `/etc/systemd/system/${UNIT}`,
    controlGroup: `/system.slice/${UNIT}`,
    execMainCode: 0,
    execMainStatus: 0,
    execMainStartUsec: usec(ago(3 * 3600 + 13 * 60)),
    execMainExitUsec: 0,
    execStartPre: [cmd(...WAIT_GPU_ARGV)],
    execStart: [cmd(...VLLM_ARGV)],
    execStopPost: [],
    timeoutStartUsec: 120_000_000,
    timeoutStopUsec: 90_000_000,
    restart: "no",
    restartUsec: 100_000,
    startLimitBurst: 5,
    startLimitIntervalUsec: 10_000_000,
    timestamps: {
      inactiveExitUsec: usec(ago(3 * 3600 + 13 * 60)),
      activeEnterUsec: usec(ago(3 * 3600 + 12 * 60)),
      activeExitUsec: 0,
      inactiveEnterUsec: 0,
    },
    controlProcess: null,
    mainProcess: proc(4121, VLLM_ARGV),
    processes: [proc(4121, VLLM_ARGV)],
    requires: ["system.slice", "sysinit.target"], // what DefaultDependencies=yes adds
    ...overrides,
  };
}

type Step = [atMs: number, to: string, extra?: Partial<UnitTransition>];

/** A chain of transitions; each `from` is the previous `to` (the first one's from is given). */
export function transitions(first: string | null, steps: Step[], name = UNIT): UnitTransition[] {
  let from: UnitStatePair | null = first === null ? null : pair(first);
  return steps.map(([atMs, to, extra]) => {
    const t: UnitTransition = {
      unit: name,
      atUsec: usec(atMs),
      from,
      to: pair(to),
      result: "success",
      mainPid: 0,
      controlPid: 0,
      nRestarts: 0,
      inRestartCycle: false,
      ...extra,
    };
    from = t.to;
    return t;
  });
}

export function holder(kind: GpuHolder["kind"], pid: number, usedMiB: number, extra: Partial<GpuHolder> = {}): GpuHolder {
  return {
    kind,
    pid,
    unit: kind === "outside" ? null : UNIT,
    processName: "python3",
    cmdline: ["python3", "-m", "vllm.entrypoints.openai.api_server"],
    state: kind === "exited" ? "gone" : "running",
    usedMiB,
    ...extra,
  };
}

export function gpuUuid(index: number): string {
  return `GPU-${String(index).padStart(8, "0")}-1111-2222-3333-444455556666`;
}

export function gpu(index: number | null, extra: Partial<GpuAttributed> & { holders?: GpuHolder[] } = {}, uuidIndex = index ?? 99): GpuAttributed {
  const holders = extra.holders ?? [];
  const attributed = holders.reduce((s, h) => s + h.usedMiB, 0);
  const unattributed = extra.unattributedMiB ?? 0;
  return {
    uuid: gpuUuid(uuidIndex),
    index,
    name: "NVIDIA H200",
    pciBusId: `00000000:${(0x18 + (uuidIndex % 8)).toString(16).toUpperCase()}:00.0`,
    memoryTotalMiB: H200_MIB,
    memoryUsedMiB: attributed + unattributed,
    utilizationPct: 0,
    temperatureC: 34,
    powerW: 120,
    unattributedMiB: unattributed,
    ...extra,
    holders,
  };
}

export function sample(atMs: number, gpus: GpuAttributed[]): GpuSample {
  return { atMs, gpus };
}

/** One sample per second over [fromS, toS] seconds ago, built by a function of the time. */
export function series(fromSecondsAgo: number, toSecondsAgo: number, build: (atMs: number) => GpuAttributed[]): GpuSample[] {
  const out: GpuSample[] = [];
  for (let s = fromSecondsAgo; s >= toSecondsAgo; s--) out.push(sample(ago(s), build(ago(s))));
  return out;
}

let cursor = 0;
export function line(atMs: number, message: string, extra: Partial<JournalEntry> = {}): JournalEntry {
  cursor += 1;
  return { cursor: `s=fixture;i=${cursor}`, atUsec: usec(atMs), unit: UNIT, priority: 6, pid: 5300, message, ...extra };
}
/** A line systemd itself logged about the unit (PID 1). */
export function systemdLine(atMs: number, message: string, extra: Partial<JournalEntry> = {}): JournalEntry {
  return line(atMs, message, { pid: 1, ...extra });
}

export function facts(overrides: Partial<DiagnosisFacts> = {}): DiagnosisFacts {
  return {
    nowMs: NOW,
    unit: unit(),
    requestedName: UNIT,
    recentTransitions: [],
    gpuNow: null,
    gpuRecent: [],
    journal: [],
    job: null,
    ...overrides,
  };
}

// ---------------------------------------------------------------------------------------
// The incident: vllm-kimi-k25.service's main process (PID 4121, holding memory on all eight
// H200s) was SIGKILLed 14 s ago; Restart=always brought the unit back to activating/start-pre
// 12 s ago, where its ExecStartPre polls nvidia-smi. The driver began releasing the memory 10 s
// ago at 21 GiB/s: 808 GiB → 598 GiB now.

export const INCIDENT = {
  killedAt: ago(14),
  startPreAt: ago(12),
  drainStartAt: ago(10),
  peakMiB: 808 * GIB,
  rateMiBs: 21 * GIB,
  pid: 4121,
  controlPid: 5210,
};

export function incidentHeldMiB(atMs: number, rateMiBs = INCIDENT.rateMiBs, drainStartAt = INCIDENT.drainStartAt): number {
  const drained = atMs <= drainStartAt ? 0 : ((atMs - drainStartAt) / 1000) * rateMiBs;
  return Math.max(0, INCIDENT.peakMiB - drained);
}

export interface IncidentOptions {
  /** MiB/s the memory drains at after drainStartAt (0 = stuck). */
  rateMiBs?: number;
  drainStartAt?: number;
  /** Per-GPU holders added to every sample (e.g. another unit). */
  extraHolders?: (index: number) => GpuHolder[];
  gpuCount?: number;
  /** one exited PID per GPU (vLLM workers) instead of one PID on all GPUs */
  workers?: boolean;
  timeoutStartUsec?: number;
  startPreAt?: number;
}

export function incidentGpus(atMs: number, o: IncidentOptions = {}): GpuAttributed[] {
  const count = o.gpuCount ?? 8;
  const perGpu = incidentHeldMiB(atMs, o.rateMiBs, o.drainStartAt) / count;
  const exited = atMs >= INCIDENT.killedAt;
  return Array.from({ length: count }, (_, i) =>
    gpu(i, {
      holders: [
        holder(exited ? "exited" : "unit", o.workers ? INCIDENT.pid + i : INCIDENT.pid, perGpu, exited ? { exitedAtMs: INCIDENT.killedAt } : {}),
        ...(o.extraHolders?.(i) ?? []),
      ],
    }),
  );
}

export function incidentFacts(o: IncidentOptions = {}): DiagnosisFacts {
  const startPreAt = o.startPreAt ?? INCIDENT.startPreAt;
  const recent = series(60, 0, (at) => incidentGpus(at, o));
  return facts({
    unit: unit({
      activeState: "activating",
      subState: "start-pre",
      mainPid: 0,
      controlPid: INCIDENT.controlPid,
      nRestarts: 1,
      restart: "always",
      restartUsec: 2_000_000,
      stateChangeUsec: usec(startPreAt),
      // systemd resets ExecMain* when the next start begins (seen on systemd 252 in
      // e2e/diagnosis): during the restart's start-pre only the journal has the kill.
      execMainCode: 0,
      execMainStatus: 0,
      execMainExitUsec: 0,
      timeoutStartUsec: o.timeoutStartUsec ?? 120_000_000,
      timestamps: {
        inactiveExitUsec: usec(startPreAt),
        activeEnterUsec: usec(ago(3 * 3600)),
        activeExitUsec: usec(INCIDENT.killedAt),
        inactiveEnterUsec: usec(startPreAt - 100),
      },
      controlProcess: proc(INCIDENT.controlPid, WAIT_GPU_ARGV, { startedAtMs: startPreAt }),
      mainProcess: null,
      processes: [proc(INCIDENT.controlPid, WAIT_GPU_ARGV, { startedAtMs: startPreAt })],
    }),
    recentTransitions: transitions("inactive/dead", [
      [ago(3 * 3600 + 40), "activating/start-pre"],
      [ago(3 * 3600), "active/running", { mainPid: INCIDENT.pid }],
      [INCIDENT.killedAt, "failed/failed", { result: "signal", inRestartCycle: true }],
      [INCIDENT.killedAt + 2, "activating/auto-restart", { result: "signal", inRestartCycle: true }],
      [startPreAt - 100, "inactive/dead", { inRestartCycle: true, nRestarts: 1 }],
      [startPreAt, "activating/start-pre", { controlPid: INCIDENT.controlPid, nRestarts: 1 }],
    ]),
    gpuNow: recent[recent.length - 1],
    gpuRecent: recent,
    journal: [
      systemdLine(INCIDENT.killedAt, "Main process exited, code=killed, status=9/KILL"),
      systemdLine(INCIDENT.killedAt + 1, "Failed with result 'signal'."),
      systemdLine(startPreAt - 100, "Scheduled restart job, restart counter is at 1."),
      ...[11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1].map((s) => line(ago(s), "waiting for GPU memory", { pid: INCIDENT.controlPid })),
    ],
  });
}

// ---------------------------------------------------------------------------------------
// Shared by the case tests

export const evidence = (d: Diagnosis, label: string | RegExp) => d.evidence.find((e) => (typeof label === "string" ? e.label === label : label.test(e.label)));
export const values = (d: Diagnosis) => d.evidence.map((e) => `${e.label}: ${e.value}`).join("\n");

/** A unit sitting in activating/start-pre since `secondsAgo`, its ExecStartPre polling nvidia-smi. */
export function startPreUnit(secondsAgo: number, overrides: Partial<UnitDetail> = {}): UnitDetail {
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
export function steadyGpus(
  holders: (index: number) => GpuAttributed["holders"],
  extra: (index: number) => Partial<GpuAttributed> = () => ({}),
): GpuAttributed[] {
  return Array.from({ length: 8 }, (_, i) => gpu(i, { holders: holders(i), ...extra(i) }));
}

export function steadyFacts(u: UnitDetail, gpus: () => GpuAttributed[], overrides = {}) {
  const recent = series(30, 0, () => gpus());
  return facts({ unit: u, gpuNow: recent[recent.length - 1], gpuRecent: recent, ...overrides });
}
