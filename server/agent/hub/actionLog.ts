/**
 * Who did what to which unit and why, and how the job systemd queued for it ended. A job can
 * finish before the caller records its action (systemd is fast; the reply is not), so results
 * of unclaimed jobs are kept for a while and joined when the action arrives.
 */
import type { ActionRecord } from "../../contract/events";
import type { JobEvent } from "../../contract/types";

export type ActionInput = Omit<ActionRecord, "id" | "outcome" | "error" | "atMs" | "jobId">;
export type ActionResult = { jobId: number | null } | { error: string };

export class ActionLog {
  private actions: ActionRecord[] = [];
  private readonly byJob = new Map<number, ActionRecord>();
  /** results of jobs that finished before the caller got to record its action */
  private readonly finishedJobs = new Map<number, string>();

  constructor(
    private readonly bootId: string,
    private readonly capacity = 5_000,
  ) {}

  /** Actions from an earlier run; one whose job end was never seen says so rather than look running forever. */
  restore(actions: ActionRecord[]): void {
    for (const a of actions) {
      this.actions.push(a.outcome === null ? { ...a, outcome: "unknown", error: a.error ?? "the agent restarted before this job finished" } : a);
    }
  }

  record(a: ActionInput, result: ActionResult, nowMs = Date.now()): ActionRecord {
    const record: ActionRecord = {
      ...a,
      id: `${this.bootId}-a${this.actions.length + 1}-${nowMs.toString(36)}`,
      atMs: nowMs,
      jobId: "jobId" in result ? result.jobId : null,
      outcome: "error" in result ? "error" : result.jobId === null ? "done" : null,
      error: "error" in result ? result.error : null,
    };
    this.actions.push(record);
    if (this.actions.length > this.capacity) this.actions.splice(0, this.actions.length - this.capacity);
    if (record.jobId !== null) {
      this.byJob.set(record.jobId, record);
      const early = this.finishedJobs.get(record.jobId);
      if (early) record.outcome = early;
    }
    return record;
  }

  /** A job ended: the action it belongs to, now with its outcome, or null when none is known (yet). */
  jobFinished(job: JobEvent): ActionRecord | null {
    const result = job.result ?? "done";
    const action = this.byJob.get(job.jobId);
    if (action) {
      action.outcome = result;
      this.byJob.delete(job.jobId);
      return action;
    }
    this.finishedJobs.set(job.jobId, result);
    if (this.finishedJobs.size > 1000) this.finishedJobs.delete(this.finishedJobs.keys().next().value!);
    return null;
  }

  forUnit(unit: string, sinceMs = 0): ActionRecord[] {
    return this.actions.filter((a) => a.unit === unit && a.atMs >= sinceMs);
  }

  recent(limit = 100): ActionRecord[] {
    return this.actions.slice(-limit);
  }

  get size(): number {
    return this.actions.length;
  }
}
