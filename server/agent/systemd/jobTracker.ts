/**
 * systemd jobs of the tracked units: queued → running → finished events, the job types (which
 * systemd forgets as soon as a job is gone), and jobs that started or ended while the adapter
 * was not listening (found at a re-read).
 */
import type { JobEvent } from "../../contract/types";
import type { SystemdEvent } from "../adapter";
import type { BusConnection } from "./bus";
import { jobIdFromPath, parseJobRef, str, type PlainProps } from "./dbusValues";
import { findJobResult, type JournalSource } from "./journal";
import { JOB_IFACE, type SystemdCalls } from "./systemdCalls";

interface KnownJob {
  id: number;
  unit: string;
  type: string;
  running: boolean;
}

/** A job a tracked unit holds right now (its Job property). */
export interface HeldJob {
  unit: string;
  path: string;
}

/** Job types kept for lookup; the oldest go first. */
const MAX_JOB_TYPES = 2000;

export class JobTracker {
  private readonly jobs = new Map<number, KnownJob>();
  /** job id → type, for jobs we queued or looked up (bounded) */
  private readonly jobTypes = new Map<number, string>();

  constructor(
    private readonly calls: SystemdCalls,
    private readonly journalSource: JournalSource,
    private readonly emit: (e: SystemdEvent) => void,
  ) {}

  /** The type of a job we know of (for decoding a unit's Job property), else null. */
  readonly typeOf = (id: number): string | null => this.jobTypes.get(id) ?? null;

  has(id: number): boolean {
    return this.jobs.has(id);
  }

  rememberType(id: number, type: string): void {
    this.jobTypes.set(id, type);
    if (this.jobTypes.size > MAX_JOB_TYPES) this.jobTypes.delete(this.jobTypes.keys().next().value!);
  }

  /** Before decoding a unit's properties: look up the type of the job it holds if we do not know it. */
  async ensureType(conn: BusConnection, props: PlainProps): Promise<void> {
    const ref = parseJobRef(props.Job);
    if (ref && !this.jobTypes.has(ref.id)) await this.info(conn, ref.id, ref.path, str(props.SubState));
  }

  /** A new job of a tracked unit: announced as queued, and as running if it already runs. */
  async announce(conn: BusConnection, id: number, path: string, unit: string, unitSubState: string | undefined): Promise<void> {
    const { type, running } = await this.info(conn, id, path, unitSubState);
    const job: KnownJob = { id, unit, type, running: false };
    this.jobs.set(id, job);
    this.emitJob(job, "queued");
    if (running) {
      job.running = true;
      this.emitJob(job, "running");
    }
  }

  /** JobRemoved: the job finished with `result` (done, failed, canceled, dependency …). */
  finished(id: number, unit: string, result: string): void {
    const job = this.jobs.get(id);
    this.jobs.delete(id);
    this.emitJob(job ?? { id, unit, type: this.jobTypes.get(id) ?? "unknown", running: false }, "finished", result);
  }

  /** PropertiesChanged on a job object: a queued job that starts running says so. */
  stateChanged(path: string, changed: PlainProps): void {
    const id = jobIdFromPath(path);
    const job = id === null ? undefined : this.jobs.get(id);
    if (job && !job.running && changed.State === "running") {
      job.running = true;
      this.emitJob(job, "running");
    }
  }

  /**
   * After a re-read, given the jobs the units hold now: jobs that ended unseen get their result
   * from the journal; new ones are announced.
   */
  async reconcile(conn: BusConnection, held: Map<number, HeldJob>, subStateOf: (unit: string) => string | undefined): Promise<void> {
    for (const job of [...this.jobs.values()]) {
      if (held.has(job.id)) continue;
      this.jobs.delete(job.id);
      const result = (await findJobResult({ ...this.journalSource, unit: job.unit, jobId: job.id }).catch(() => null)) ?? "unknown";
      this.emitJob(job, "finished", result);
    }
    for (const [id, { unit, path }] of held) {
      if (this.jobs.has(id)) continue;
      await this.announce(conn, id, path, unit, subStateOf(unit));
    }
  }

  /**
   * A job's type and state. Jobs of systemd's own making can be over before we ask (an automatic
   * restart job lives a few ms); a job that appears while its unit sits in auto-restart is the
   * restart job systemd 252 queues there (service_enter_restart: JOB_RESTART).
   */
  private async info(conn: BusConnection, id: number, path: string, unitSubState?: string): Promise<{ type: string; running: boolean }> {
    try {
      const props = await this.calls.getAll(conn, path, JOB_IFACE);
      const type = str(props.JobType) || this.jobTypes.get(id) || "unknown";
      this.rememberType(id, type);
      return { type, running: props.State === "running" };
    } catch {
      // the job is already gone (JobRemoved follows)
      const known = this.jobTypes.get(id) ?? (unitSubState === "auto-restart" ? "restart" : undefined);
      if (known) this.rememberType(id, known);
      return { type: known ?? "unknown", running: false };
    }
  }

  private emitJob(job: KnownJob, phase: JobEvent["phase"], result?: string): void {
    const e: JobEvent = { jobId: job.id, unit: job.unit, jobType: job.type, phase, atMs: Date.now() };
    if (result !== undefined) e.result = result;
    this.emit({ type: "job", job: e });
  }
}
