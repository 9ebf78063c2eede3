/**
 * GPU-aware restarts ("restart when its GPUs are free"): an operation the agent runs for one unit
 * — stop it (if running), wait until the memory its last run held on its GPUs is released, start
 * it — streamed step by step as `{ kind: "operation", operation }` events and readable with
 * `operations.get` / `operations.list`. Step names and the fields `id, host, unit, step, heldMiB,
 * pids, message, atMs` are a contract: never rename one, only add. Part of the contract: imports
 * nothing else of the project.
 */
import type { Ms } from "./types";

/** In the order an operation passes through them; the last four end it. */
export const OPERATION_STEPS = ["stopping", "waiting-for-gpus", "starting", "started", "failed", "timed-out", "canceled"] as const;
export type OperationStep = (typeof OPERATION_STEPS)[number];

export const FINAL_OPERATION_STEPS: readonly OperationStep[] = ["started", "failed", "timed-out", "canceled"];

export function isFinalOperationStep(step: OperationStep): boolean {
  return FINAL_OPERATION_STEPS.includes(step);
}

/** What was asked for: `units.restart` or `units.start` with `waitForGpus: true`. */
export type OperationKind = "restart" | "start";

/** One GPU the unit's last run used, and what of that run still holds memory on it. */
export interface OperationGpu {
  uuid: string;
  index: number | null;
  /** MiB still held for the unit here: its live processes + its exited holders + memory no live process explains (above its level before the stop) */
  heldMiB: number;
  /** processes of the unit's last run still alive and holding memory here */
  pids: number[];
  /** processes of the unit's last run that exited, whose memory is still held (draining) */
  exitedPids: number[];
  /** memory.used not explained by any listed process, above its level before the stop; 0 on unified-memory GPUs */
  unexplainedMiB: number;
}

/** A live process outside the unit (in no unit, or in another one) holding memory on the unit's GPUs. */
export interface ForeignHolder {
  pid: number;
  cmdline: string[];
  processName: string;
  /** its systemd unit; null = in no unit */
  unit: string | null;
  gpuUuid: string;
  gpuIndex: number | null;
  /** null when nvidia-smi reports no number for it ([N/A]) */
  usedMiB: number | null;
  /** from /proc: `gpus.killHolder` must be given it back, so a reused PID is never killed */
  startedAtMs: Ms | null;
}

/**
 * Unified-memory hosts (GB10 / DGX Spark: memory.used and memory.total are [N/A]): the GPU shares
 * the host's memory, so the wait also watches MemAvailable (/proc/meminfo) recover.
 */
export interface OperationMemoryPool {
  totalMiB: number;
  availableMiB: number;
  /** MemAvailable just before the stop */
  availableBeforeMiB: number;
  /** what the unit's processes held (per-process used_memory), i.e. what should come back */
  expectedFreeMiB: number;
}

export interface OperationStepRecord {
  step: OperationStep;
  atMs: Ms;
  heldMiB: number;
  pids: number[];
  message: string;
}

export interface Operation {
  id: string;
  /** The agent's machine name; at the panel, the panel's name for the host (what `operations.get({ host })` takes). */
  host: string;
  unit: string;
  kind: OperationKind;
  /** the current step */
  step: OperationStep;
  /** MiB still held for the unit on its GPUs (sum of `gpus[].heldMiB`) */
  heldMiB: number;
  /** live and exited PIDs of the unit's last run still holding memory */
  pids: number[];
  /** one sentence: what happens now, or why it ended */
  message: string;
  /** when the current step (or its latest progress) was reported */
  atMs: Ms;
  createdAtMs: Ms;
  /** the wait ends with `timed-out` at this time (it bounds stopping and waiting-for-gpus) */
  deadlineMs: Ms;
  timeoutMs: number;
  /** where the timeout came from: the call's timeoutMs, the unit's TimeoutStartSec, or the cap when that is infinite */
  timeoutSource: "call" | "unit" | "cap";
  user: string;
  role: string;
  reason: string | null;
  /** the unit's GPUs from its last run, captured before the stop */
  gpus: OperationGpu[];
  /** set when the operation refused to start because of them (step `failed`) */
  foreign: ForeignHolder[];
  /** unified-memory hosts only */
  pool: OperationMemoryPool | null;
  /** the systemd job it queued last (stop, then start); null before the first */
  jobId: number | null;
  /** one entry per step entered, oldest first (progress within a step updates the operation, not this list) */
  steps: OperationStepRecord[];
}
