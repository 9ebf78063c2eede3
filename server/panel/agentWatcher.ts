/**
 * One server-side subscription from the panel to its agent's `events.watch`, for the audit log:
 * - learns the agent's host name (audit rows and the action guard are keyed by it);
 * - when a job ends (`job` events with phase finished, and `action` events carrying an outcome),
 *   writes the job result into the audit row that is still "pending" for that host and job;
 * - remembers recent results, for a job that ends before the panel has stored its job id;
 * - after a (re)connect that starts from a snapshot, settles pending rows whose jobs are no
 *   longer running as "unknown": their end happened while nobody was watching.
 * Robust to agent restarts: the subscription link reconnects (resuming after the last event
 * id; a new agent boot answers with a snapshot), and a stream that errors is re-opened with
 * backoff. A refused bearer token is logged once, clearly.
 */
import type { AgentEvent } from "../contract/events";
import type { AuditStore } from "../auth/audit";
import type { AgentClient } from "./agentClient";
import { agentErrorMessage } from "./agentErrors";

export interface AgentWatcherOptions {
  agent: AgentClient;
  audit: AuditStore;
  agentUrl: string;
  tokenSource: string;
  log?: (msg: string) => void;
  /** Backoff for re-opening a failed stream. Default 1 s doubling to 30 s. */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** Pending rows younger than this are left alone when settling after a snapshot. Default 30 s. */
  settleAfterMs?: number;
  clock?: () => number;
}

const WATCHER_ACTOR = { user: "gpudeck-panel", role: "viewer" as const, unitPatterns: [] };

export class AgentWatcher {
  hostName: string | null = null;
  bootId: string | null = null;
  /** Last problem with the stream, for status displays; null while it is healthy. */
  lastError: string | null = null;
  private readonly finished = new Map<string, string>();
  private sub: { unsubscribe(): void } | null = null;
  private retry: ReturnType<typeof setTimeout> | null = null;
  private attempt = 0;
  private stopped = true;
  private lastEventId: string | null = null;
  private readonly log: (msg: string) => void;
  private readonly clock: () => number;
  private readonly listeners = new Set<(e: AgentEvent) => void>();

  constructor(private readonly opts: AgentWatcherOptions) {
    this.log = opts.log ?? ((m) => console.error(`[panel] ${m}`));
    this.clock = opts.clock ?? Date.now;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    this.sub?.unsubscribe();
    this.sub = null;
  }

  /** For tests and diagnostics: every event the watcher handled. */
  onEvent(listener: (e: AgentEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The result of a job that already ended on `host`, if the watcher saw it. */
  finishedOutcome(host: string, jobId: number): string | undefined {
    return this.finished.get(`${host}\u0000${jobId}`);
  }

  /** The agent's host name: learned from the stream, else asked once. */
  async host(): Promise<string> {
    if (this.hostName) return this.hostName;
    const status = await this.opts.agent.host.status.query(undefined, { context: { actor: WATCHER_ACTOR } });
    this.hostName = status.host;
    return status.host;
  }

  private connect(): void {
    if (this.stopped) return;
    this.sub = this.opts.agent.events.watch.subscribe(
      { lastEventId: this.lastEventId },
      {
        context: { actor: WATCHER_ACTOR },
        onData: ({ id, data }) => {
          this.lastEventId = id;
          this.attempt = 0;
          if (this.lastError) this.log(`agent event stream is back (${this.opts.agentUrl})`);
          this.lastError = null;
          this.handle(data);
        },
        onError: (err) => this.failed(err),
        onComplete: () => this.failed(new Error("the agent closed the event stream")),
        onConnectionStateChange: (state) => {
          if (state.state === "connecting" && state.error) this.noteProblem(agentErrorMessage(state.error, this.opts));
        },
      },
    );
  }

  private noteProblem(message: string): void {
    if (message !== this.lastError) this.log(`agent event stream: ${message}`);
    this.lastError = message;
  }

  private failed(err: unknown): void {
    this.sub?.unsubscribe();
    this.sub = null;
    if (this.stopped) return;
    this.noteProblem(agentErrorMessage(err, this.opts));
    const min = this.opts.retryMinMs ?? 1000;
    const delay = Math.min(this.opts.retryMaxMs ?? 30_000, min * 2 ** this.attempt);
    this.attempt++;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.connect();
    }, delay);
    this.retry.unref?.();
  }

  private settle(host: string, outcome: string, jobId: number): void {
    const key = `${host}\u0000${jobId}`;
    this.finished.set(key, outcome);
    if (this.finished.size > 2000) this.finished.delete(this.finished.keys().next().value!);
    this.opts.audit.updateAuditOutcomeByJob(host, jobId, outcome);
  }

  private handle(event: AgentEvent): void {
    switch (event.kind) {
      case "snapshot": {
        this.hostName = event.host;
        this.bootId = event.bootId;
        const running = new Set(event.units.flatMap((u) => (u.job ? [u.job.id] : [])));
        const cutoff = this.clock() - (this.opts.settleAfterMs ?? 30_000);
        for (const row of this.opts.audit.queryAudit({ host: event.host, outcome: "pending", to: cutoff, limit: 1000 })) {
          if (row.jobId === null || running.has(row.jobId)) continue;
          this.opts.audit.updateAuditOutcome(row.id, "unknown", {
            detail: "the job ended while the panel was not watching (the agent or the panel restarted)",
          });
        }
        break;
      }
      case "job":
        if (this.hostName && event.job.phase === "finished") this.settle(this.hostName, event.job.result ?? "done", event.job.jobId);
        break;
      case "action":
        if (this.hostName && event.action.jobId !== null && event.action.outcome) {
          this.settle(this.hostName, event.action.outcome, event.action.jobId);
        }
        break;
      default:
        break;
    }
    for (const l of this.listeners) l(event);
  }
}
