/**
 * Input and output of the "why won't it start?" engine (`diagnose()` in ./diagnose.ts).
 * Pure data: the agent assembles `DiagnosisFacts` from what it already tracks and the panel
 * renders the returned `Diagnosis`. Nothing here touches systemd, nvidia-smi or /proc.
 */
import type { GpuSample, JobEvent, JournalEntry, Ms, UnitDetail, UnitStateReading, UnitTransition } from "../agent/types";

export interface DiagnosisFacts {
  /** "Now" on the agent's clock (ms since the epoch); every age and ETA is relative to it. */
  nowMs: Ms;
  /** Fresh detail; null = systemd does not know the unit at all. */
  unit: UnitDetail | null;
  /** The name the user asked about (used when `unit` is null). */
  requestedName: string;
  /** This unit's transitions, oldest → newest (the last ~50). */
  recentTransitions: UnitTransition[];
  /** Latest attributed GPU sample; null = no GPU telemetry. */
  gpuNow: GpuSample | null;
  /** Samples of the last ~60 s, oldest → newest (used for the drain rate). May include gpuNow. */
  gpuRecent: GpuSample[];
  /** The unit's last ~50 journal lines, oldest → newest. */
  journal: JournalEntry[];
  /** The job systemd runs for the unit right now, if any. */
  job: { id: number; type: string } | null;
  /**
   * GPU uuids the unit used last time it ran. When absent, `diagnose()` derives them from the
   * holders in gpuRecent/gpuNow (see `gpusUsedByUnit`), else assumes every GPU.
   */
  unitGpus?: string[];
  /**
   * Optional: recent job events of this unit (oldest → newest). Lets a finished start job with
   * result "dependency" be recognised even when the journal line is not in `journal`.
   */
  recentJobs?: JobEvent[];
  /**
   * Optional: the units this one requires (`unit.requires`: Requires=/BindsTo=/Requisite=, the
   * first few) as they are now. Lets "dependency-failed" name the failed one. The agent reads
   * them only when the diagnosis is "dependency-failed" (see ./dependencies.ts).
   */
  dependencies?: DependencyState[];
}

/** A unit the diagnosed one requires, as it is now. */
export interface DependencyState extends UnitStateReading {
  /**
   * In this agent's allow-list (GPUDECK_UNITS): the panel may open it (and act on it there).
   * False for units the agent may only read the state of, e.g. a mount outside the globs.
   */
  manageable: boolean;
}

export type DiagnosisSeverity = "ok" | "info" | "warning" | "critical";

export type EvidenceSource = "systemd" | "nvidia-smi" | "proc" | "journal" | "gpudeck";

export interface Evidence {
  label: string;
  value: string;
  source: EvidenceSource;
}

export type DiagnosisActionKind = "reset-failed" | "restart" | "start" | "stop" | "open-unit";

export interface NextStep {
  text: string;
  /** A button the panel can offer; absent when the step needs a shell or a config change. */
  action?: { kind: DiagnosisActionKind; unit: string };
}

/**
 * Stable ids, one per recognised case. The UI may key icons or copy on them; never rename one,
 * only add.
 */
export const DIAGNOSIS_CODES = [
  // healthy / quiet states
  "healthy",
  "stopped",
  "start-queued",
  "reloading",
  "maintenance",
  "unknown-state",
  "unit-file-gone",
  // waiting in ExecStartPre for GPU memory (cases 1–3)
  "waiting-gpu-exited",
  "waiting-gpu-unit",
  "waiting-gpu-leftover",
  "waiting-gpu-outside",
  "waiting-gpu-unattributed",
  // activating without GPU contention
  "start-pre-running",
  "start-running",
  "start-post-running",
  "auto-restart-pending",
  // failures (cases 4, 5, 7)
  "start-pre-failed",
  "start-failed",
  "start-post-failed",
  "exited-after-start",
  "main-exited",
  "oom-killed",
  "start-timeout",
  "stop-timeout",
  "failed",
  // crash loop (case 6)
  "crash-loop",
  "start-limit-hit",
  // load / dependency problems (case 8)
  "not-found",
  "masked",
  "bad-setting",
  "load-error",
  "dependency-failed",
  // stopping (case 9)
  "stopping",
  "stop-stuck",
] as const;

export type DiagnosisCode = (typeof DIAGNOSIS_CODES)[number];

export interface Diagnosis {
  severity: DiagnosisSeverity;
  code: DiagnosisCode;
  /** One plain sentence with the key numbers. */
  headline: string;
  evidence: Evidence[];
  nextStep?: NextStep;
  /**
   * ms from nowMs until the thing the headline waits for. waiting-gpu-exited/-unattributed: until
   * the memory is free (absent when it is not draining or the rate is unknown); waiting-gpu-unit/
   * -outside/-leftover and *-running: until TimeoutStartSec; stopping/stop-stuck: until SIGKILL
   * (or the stop timeout); crash-loop/auto-restart-pending: until the next automatic restart.
   */
  etaMs?: number;
}
