/**
 * The waiting-for-gpus step: every GPU sample taken after the stop goes through the rule in
 * ./gpuWait.ts, progress is reported (when what is held changes, at most once a second), and
 * the step ends when the GPUs are free, a foreign process holds memory on them, the unit was
 * started by someone else, the deadline passes, or the operation is canceled.
 */
import type { StoredEvent } from "../../contract/events";
import type { GpuSample, UnitSummary } from "../../contract/types";
import { GpuWait, type GpuWaitOptions, type GpuWaitStatus } from "./gpuWait";
import type { LastRun } from "./lastRun";

export interface WaitHub {
  gpuNow(): GpuSample | null;
  unit(name: string): UnitSummary | undefined;
  subscribe(listener: (e: StoredEvent) => void, opts?: { internal?: boolean }): () => void;
}

export type WaitOutcome =
  | { kind: "free"; status: GpuWaitStatus }
  | { kind: "foreign"; status: GpuWaitStatus }
  | { kind: "started-meanwhile"; status: GpuWaitStatus | null; state: string }
  | { kind: "timeout"; status: GpuWaitStatus | null }
  | { kind: "aborted"; status: GpuWaitStatus | null };

export interface WaitParams {
  unit: string;
  run: LastRun;
  /** only samples taken after this count (the stop's end) */
  afterMs: number;
  deadlineMs: number;
  signal: AbortSignal;
  onProgress: (status: GpuWaitStatus) => void;
  options?: GpuWaitOptions;
  /** progress events at most this often (default 1 s) */
  progressEveryMs?: number;
  clock?: () => number;
}

const STARTED = new Set(["active", "activating", "reloading"]);

export function waitForGpus(hub: WaitHub, p: WaitParams): Promise<WaitOutcome> {
  const clock = p.clock ?? Date.now;
  const wait = new GpuWait(p.unit, p.run, p.options);
  const every = p.progressEveryMs ?? 1000;
  let last: GpuWaitStatus | null = null;
  let lastReportAt = -Infinity;
  let lastReported = "";
  return new Promise<WaitOutcome>((resolve) => {
    let done = false;
    const finish = (o: WaitOutcome) => {
      if (done) return;
      done = true;
      unsubscribe();
      clearTimeout(timer);
      p.signal.removeEventListener("abort", onAbort);
      resolve(o);
    };
    const onSample = (sample: GpuSample) => {
      if (sample.atMs <= p.afterMs) return;
      const status = wait.observe(sample);
      last = status;
      if (status.foreign.length > 0) return finish({ kind: "foreign", status });
      if (status.newPids.length > 0) return finish({ kind: "started-meanwhile", status, state: "its processes are on the GPUs again" });
      const key = `${status.heldMiB}|${status.pids.join(",")}|${status.message}`;
      const now = clock();
      if (status.ready || (key !== lastReported && now - lastReportAt >= every)) {
        lastReported = key;
        lastReportAt = now;
        p.onProgress(status);
      }
      if (status.ready) finish({ kind: "free", status });
    };
    const onUnit = (u: UnitSummary) => {
      if (STARTED.has(u.activeState)) finish({ kind: "started-meanwhile", status: last, state: `${u.activeState} (${u.subState})` });
    };
    const unsubscribe = hub.subscribe(
      (e) => {
        if (e.event.kind === "gpu") onSample(e.event.sample);
        else if (e.event.kind === "unit" && e.event.unit.name === p.unit) onUnit(e.event.unit);
      },
      { internal: true },
    );
    const timer = setTimeout(() => finish({ kind: "timeout", status: last }), Math.max(0, p.deadlineMs - clock()));
    const onAbort = () => finish({ kind: "aborted", status: last });
    if (p.signal.aborted) return onAbort();
    p.signal.addEventListener("abort", onAbort);
    const now = hub.unit(p.unit);
    if (now) onUnit(now);
    const latest = hub.gpuNow();
    if (latest) onSample(latest);
  });
}
