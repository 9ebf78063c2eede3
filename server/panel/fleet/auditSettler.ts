/**
 * Audit rows of actions get their job's result, from the fleet's agent streams (no stream of its
 * own): a `job` event that finished, or an `action` event carrying an outcome, settles the row
 * still "pending" for that host and job. Results are remembered for a while, for a job that ends
 * before the panel stored its job id. After a host's stream (re)starts from a snapshot, pending
 * rows of that host whose jobs no longer run are settled as "unknown": their end happened while
 * nobody was watching. Events are handled one after another (database writes, in order); every
 * replica does the same for the rows of every replica, and only a row still pending changes.
 */
import type { AuditStore } from "../../auth/audit";
import type { AgentEvent } from "../../contract/events";
import { OperationAudit } from "./operationAudit";

export interface AuditSettlerOptions {
  /** Pending rows younger than this are left alone when settling after a snapshot. Default 30 s. */
  settleAfterMs?: number;
  clock?: () => number;
  log?: (msg: string) => void;
}

export class AuditSettler {
  private readonly finished = new Map<string, string>();
  private queue: Promise<void> = Promise.resolve();
  /** GPU-aware operations: a row per step, and the request's outcome when it ends */
  readonly operations: OperationAudit;

  constructor(
    private readonly audit: AuditStore,
    private readonly opts: AuditSettlerOptions = {},
  ) {
    this.operations = new OperationAudit(audit);
  }

  /** The result of a job that already ended on `host`, if it was seen. */
  finishedOutcome(host: string, jobId: number): string | undefined {
    return this.finished.get(`${host}\u0000${jobId}`);
  }

  /** Handle one event of `host`'s stream; resolves when its rows are written (a failure is logged, never thrown). */
  handle(host: string, event: AgentEvent): Promise<void> {
    // remembered at once: the units router asks finishedOutcome() right after its call returns
    if (event.kind === "job" && event.job.phase === "finished") this.remember(host, event.job.result ?? "done", event.job.jobId);
    if (event.kind === "action" && event.action.jobId !== null && event.action.outcome) this.remember(host, event.action.outcome, event.action.jobId);
    const work = () => this.write(host, event);
    this.queue = this.queue.then(work, work).catch((err: Error) => {
      this.opts.log?.(`audit rows of ${host} could not be settled: ${err.message}`);
    });
    return this.queue;
  }

  private async write(host: string, event: AgentEvent): Promise<void> {
    switch (event.kind) {
      case "snapshot": {
        const running = new Set(event.units.flatMap((u) => (u.job ? [u.job.id] : [])));
        const cutoff = (this.opts.clock ?? Date.now)() - (this.opts.settleAfterMs ?? 30_000);
        for (const row of await this.audit.queryAudit({ host, outcome: "pending", to: cutoff, limit: 1000 })) {
          if (row.jobId === null || running.has(row.jobId)) continue;
          await this.audit.updateAuditOutcome(row.id, "unknown", {
            detail: "the job ended while the panel was not watching (the agent or the panel restarted)",
            ifOutcome: "pending",
          });
        }
        return;
      }
      case "job":
        if (event.job.phase === "finished") await this.audit.updateAuditOutcomeByJob(host, event.job.jobId, event.job.result ?? "done");
        return;
      case "action":
        if (event.action.jobId !== null && event.action.outcome) await this.audit.updateAuditOutcomeByJob(host, event.action.jobId, event.action.outcome);
        return;
      case "operation":
        await this.operations.handle(host, event.operation);
        return;
      default:
        return;
    }
  }

  private remember(host: string, outcome: string, jobId: number): void {
    this.finished.set(`${host}\u0000${jobId}`, outcome);
    if (this.finished.size > 2000) this.finished.delete(this.finished.keys().next().value!);
  }
}
