/**
 * Waiting for a systemd job the agent queued, from the hub's event stream. A job can finish
 * before its id is known to the caller (systemd is fast, the reply is not), so the event ring is
 * looked at first; from then on the live stream, until the job ends, the time is up, or the
 * signal aborts.
 */
import type { StoredEvent } from "../../contract/events";
import type { JobEvent } from "../../contract/types";

export interface JobHub {
  recentJobs(unit: string, limit?: number): JobEvent[];
  subscribe(listener: (e: StoredEvent) => void, opts?: { internal?: boolean }): () => void;
}

export type JobEnd = { ended: true; job: JobEvent } | { ended: false; why: "timeout" | "aborted" };

export function waitForJob(hub: JobHub, unit: string, jobId: number, timeoutMs: number, signal?: AbortSignal): Promise<JobEnd> {
  const early = hub.recentJobs(unit, 200).find((j) => j.jobId === jobId && j.phase === "finished");
  if (early) return Promise.resolve({ ended: true, job: early });
  return new Promise<JobEnd>((resolve) => {
    let done = false;
    const finish = (end: JobEnd) => {
      if (done) return;
      done = true;
      unsubscribe();
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(end);
    };
    const unsubscribe = hub.subscribe(
      (e) => {
        if (e.event.kind === "job" && e.event.job.jobId === jobId && e.event.job.phase === "finished") finish({ ended: true, job: e.event.job });
      },
      { internal: true },
    );
    const timer = setTimeout(() => finish({ ended: false, why: "timeout" }), timeoutMs);
    const onAbort = () => finish({ ended: false, why: "aborted" });
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort);
  });
}
