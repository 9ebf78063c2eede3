/**
 * What "why won't it start?" answers (`units.diagnose`): a severity, a stable code, one
 * sentence, the evidence and the next step. Part of the contract: imports nothing else of the
 * project.
 */

export type DiagnosisSeverity = "ok" | "info" | "warning" | "critical";

export type EvidenceSource = "systemd" | "nvidia-smi" | "proc" | "journal" | "gpudeck";

export interface Evidence {
  label: string;
  value: string;
  source: EvidenceSource;
}

/** "stop-loop": `units.stopLoop` (stop + reset-failed); "restart-when-free": `units.restart` with `waitForGpus: true`. */
export type DiagnosisActionKind = "reset-failed" | "restart" | "start" | "stop" | "open-unit" | "stop-loop" | "restart-when-free";

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
  // GPU faults: an Xid in the kernel log on the unit's GPUs or from its process
  "gpu-xid",
  // a Restart= loop systemd's start limit can never end (GPUDECK_CRASH_LOOP rule)
  "crash-loop-endless",
  // running but not serving: the engine loads, its endpoint does not answer, or it logged a fatal error
  "engine-loading",
  "engine-not-serving",
  "engine-failed",
  // a start request that did nothing: skipped (ExecCondition=, Condition…=) or refused by systemd
  "start-skipped",
  "start-refused",
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
  /**
   * How many journal-sourced evidence rows the panel removed because the caller may not read
   * journals (one row labelled JOURNAL_HIDDEN_LABEL says so instead; contract/roleViews.ts).
   */
  journalHidden?: number;
  /** log text quoted in the headline, next step or evidence (an engine's exception message): the panel hides it from callers without the journal permission */
  journalQuotes?: string[];
}
