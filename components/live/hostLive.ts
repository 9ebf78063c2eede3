/**
 * What the browser knows of one host from its live stream: the panel's summary, its units and,
 * on host and unit pages, its GPU samples, backend status, transitions, jobs, actions, GPU-aware
 * operations and GPU faults. Job ids and boot ids are per agent, so everything lives under its host.
 */
import type { ActionRecord } from "@/server/contract/events";
import type { GpuFault } from "@/server/contract/faults";
import type { HostSnapshot, HostSummary } from "@/server/contract/fleet";
import type { Operation } from "@/server/contract/operations";
import type { Readiness, ReadinessTransition } from "@/server/contract/readiness";
import type { BackendStatus, GpuSample, JobEvent, UnitSummary, UnitTransition } from "@/server/contract/types";

const GPU_RECENT_MS = 30 * 60_000;
const TRANSITIONS_KEPT = 5_000;
const JOBS_KEPT = 500;
const OPERATIONS_KEPT = 200;
const FAULTS_KEPT = 500;
const READINESS_KEPT = 2_000;

export class HostLive {
  summary: HostSummary | null = null;
  bootId: string | null = null;
  units = new Map<string, UnitSummary>();
  systemd: BackendStatus | null = null;
  telemetry: BackendStatus | null = null;
  gpu: GpuSample | null = null;
  gpuRecent: GpuSample[] = [];
  /** transitions seen live since the page loaded (timelines merge them with history) */
  transitions: UnitTransition[] = [];
  actions = new Map<string, ActionRecord>();
  jobs = new Map<number, JobEvent>();
  /** GPU-aware starts/restarts seen live, by id: the latest report of each */
  operations = new Map<string, Operation>();
  /** Xid faults seen live, oldest first (pages merge them with `gpus.faults`) */
  faults: GpuFault[] = [];
  /** readiness state or stage changes seen live (the timeline merges them with its history) */
  readinessTransitions: ReadinessTransition[] = [];
  /** host snapshots seen: pages refetch history when it changes (agent restarted, or a gap) */
  snapshots = 0;

  constructor(readonly name: string) {}

  /** Connected now; a down or connecting host's units are its last known state. */
  get isLive(): boolean {
    return this.summary?.state === "connected";
  }

  /** A host-scope or unit-scope snapshot: the host's state anew (GPU samples keep their history). */
  applySnapshot(e: HostSnapshot): void {
    this.summary = e.summary;
    this.bootId = e.bootId;
    this.units = new Map(e.units.map((u) => [u.name, u]));
    this.systemd = e.systemd;
    this.telemetry = e.telemetry;
    if (e.gpu) this.pushGpu(e.gpu);
    this.snapshots++;
  }

  pushTransition(t: UnitTransition): void {
    this.transitions.push(t);
    if (this.transitions.length > TRANSITIONS_KEPT) this.transitions.splice(0, this.transitions.length - TRANSITIONS_KEPT);
  }

  /** The unit's summary with its new readiness; a unit not (yet) listed is left alone. */
  setReadiness(unit: string, readiness: Readiness): void {
    const u = this.units.get(unit);
    if (!u) return;
    this.noteReadiness(unit, u.readiness, readiness);
    this.units.set(unit, { ...u, readiness });
  }

  /** A unit event: its summary anew (readiness included). */
  setUnit(unit: UnitSummary): void {
    const prev = this.units.get(unit.name);
    if (prev && unit.readiness) this.noteReadiness(unit.name, prev.readiness, unit.readiness);
    this.units.set(unit.name, unit);
  }

  /** A change of state or stage becomes a transition (progress alone does not). */
  private noteReadiness(unit: string, prev: Readiness | undefined, next: Readiness): void {
    if (prev && prev.state === next.state && prev.stage === next.stage) return;
    const stageOnly = prev?.state === next.state;
    this.readinessTransitions.push({
      unit,
      atMs: stageOnly && next.stageSinceMs != null ? next.stageSinceMs : next.sinceMs,
      from: prev ? { state: prev.state, stage: prev.stage } : null,
      to: { state: next.state, stage: next.stage },
      engine: next.engine,
      progress: next.progress,
      reason: next.reason,
    });
    if (this.readinessTransitions.length > READINESS_KEPT) this.readinessTransitions.splice(0, this.readinessTransitions.length - READINESS_KEPT);
  }

  /** The newest report of an operation wins; a replayed older one is ignored. */
  pushOperation(op: Operation): void {
    const known = this.operations.get(op.id);
    if (known && known.atMs > op.atMs) return;
    this.operations.delete(op.id);
    this.operations.set(op.id, op);
    if (this.operations.size > OPERATIONS_KEPT) this.operations.delete(this.operations.keys().next().value!);
  }

  pushFault(fault: GpuFault): void {
    if (this.faults.some((f) => f.id === fault.id)) return;
    this.faults.push(fault);
    if (this.faults.length > FAULTS_KEPT) this.faults.splice(0, this.faults.length - FAULTS_KEPT);
  }

  pushJob(job: JobEvent): void {
    this.jobs.set(job.jobId, job);
    if (this.jobs.size > JOBS_KEPT) this.jobs.delete(this.jobs.keys().next().value!);
  }

  /** Samples in time order, the last 30 minutes; a replayed or older sample is ignored. */
  pushGpu(sample: GpuSample): void {
    const last = this.gpuRecent.at(-1);
    if (last && last.atMs >= sample.atMs) return;
    this.gpu = sample;
    this.gpuRecent.push(sample);
    const cutoff = sample.atMs - GPU_RECENT_MS;
    let drop = 0;
    while (drop < this.gpuRecent.length && this.gpuRecent[drop]!.atMs < cutoff) drop++;
    if (drop > 0) this.gpuRecent.splice(0, drop);
  }
}
