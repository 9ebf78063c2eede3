/**
 * Factories for the readiness and start-request facts of diagnosis tests (beside ./fixtures.ts,
 * same fixed NOW): an engine loading, serving or failed, and actions and start jobs.
 */
import type { ActionRecord } from "../contract/events";
import type { Readiness } from "../contract/readiness";
import type { ExecRun, JobEvent } from "../contract/types";
import { ago, UNIT } from "./fixtures";

export function readiness(overrides: Partial<Readiness> = {}): Readiness {
  return {
    state: "loading",
    engine: "vllm",
    stage: "capturing CUDA graphs",
    progress: null,
    reason: null,
    sinceMs: ago(7 * 60),
    probe: { url: "http://127.0.0.1:8000/health", ok: false, status: null, atMs: ago(1), detail: "connection refused" },
    models: [],
    stageSinceMs: ago(2 * 60),
    line: { atMs: ago(2 * 60), text: "Capturing CUDA graph shapes:  49%|████▉     | 33/67 [00:10<00:10,  3.2it/s]" },
    timings: [
      { stage: "loading weights", seconds: 84.2 },
      { stage: "torch.compile", seconds: 31.7 },
    ],
    ...overrides,
  };
}

export const servingReadiness = (overrides: Partial<Readiness> = {}): Readiness =>
  readiness({
    state: "serving",
    stage: null,
    stageSinceMs: null,
    sinceMs: ago(3 * 3600),
    probe: { url: "http://127.0.0.1:8000/health", ok: true, status: 200, atMs: ago(2) },
    models: ["moonshotai/Kimi-K2.5"],
    ...overrides,
  });

export const failedReadiness = (overrides: Partial<Readiness> = {}): Readiness =>
  readiness({
    state: "failed",
    stage: "allocating KV cache",
    reason: "CUDA out of memory while allocating the KV cache on GPU 3",
    sinceMs: ago(60),
    line: { atMs: ago(60), text: "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 43.12 GiB. GPU 3 has a total capacity of 139.81 GiB" },
    ...overrides,
  });

export function action(atS: number, overrides: Partial<ActionRecord> = {}): ActionRecord {
  return {
    id: `a-${atS}`,
    atMs: ago(atS),
    unit: UNIT,
    action: "start",
    user: "alice",
    role: "operator",
    sourceAddr: null,
    reason: null,
    jobId: 23,
    outcome: null,
    error: null,
    ...overrides,
  };
}

export function finishedJob(atS: number, result: string, overrides: Partial<JobEvent> = {}): JobEvent {
  return { jobId: 23, unit: UNIT, jobType: "start", phase: "finished", result, atMs: ago(atS), ...overrides };
}

export function execCondition(status: number, overrides: Partial<ExecRun> = {}): ExecRun {
  const argv = ["/bin/sh", "-c", "nvidia-smi -L | grep -q H200"];
  return { path: argv[0]!, argv, ignoreErrors: false, startUsec: ago(30) * 1000, exitUsec: ago(30) * 1000, pid: 307, code: 1, status, ...overrides };
}
