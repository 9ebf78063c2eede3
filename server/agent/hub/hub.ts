/**
 * The agent's core: it takes what the adapters report and hands it out, as reads and as one
 * numbered event stream. It only wires its parts together:
 * - EventRing: the resumable event stream (ids carry a boot id);
 * - UnitStates: each unit's summary and transition history;
 * - ActionLog: who acted, why, and how the job ended;
 * - GpuBuffer: attributed GPU samples (latest, last 2 min, chart history);
 * - HistoryPersistence: the on-disk history and its timers.
 */
import { randomBytes } from "node:crypto";
import os from "node:os";
import type { ActionRecord, AgentEvent, StoredEvent } from "../../contract/events";
import type { BackendStatus, GpuRawSample, GpuSample, JobEvent, ObservationGap, UnitSummary, UnitTransition } from "../../contract/types";
import type { HostAdapter, SystemdEvent } from "../adapter";
import type { HistoryStore } from "../historyStore";
import { ActionLog, type ActionInput, type ActionResult } from "./actionLog";
import { EventRing } from "./eventRing";
import { GpuBuffer, type SampleAttributor, type SampleHistory } from "./gpuBuffer";
import { HistoryPersistence } from "./persistence";
import { UnitStates } from "./unitStates";
import { AGENT_VERSION } from "../version";

export type { SampleAttributor, SampleHistory } from "./gpuBuffer";

export interface HubOptions {
  eventRing?: number;
  transitionsPerUnit?: number;
  actionsKept?: number;
  /** history on disk: restored at start, written as things happen; none = memory only */
  store?: HistoryStore | null;
  /** one GPU sample is written to the store per this many ms (default 10 s) */
  storeSampleStepMs?: number;
  log?: (message: string) => void;
  /** the machine name to report (default os.hostname(); simulated hosts have their own) */
  hostname?: string;
}

export class Hub {
  readonly bootId = randomBytes(6).toString("hex");
  readonly hostname: string;
  private readonly events: EventRing;
  private readonly unitStates: UnitStates;
  private readonly actions: ActionLog;
  private readonly gpu: GpuBuffer;
  private readonly persistence: HistoryPersistence;
  private readonly transitionsPerUnit: number;
  private readonly actionsKept: number;
  private telemetry: BackendStatus = { state: "connecting", message: "waiting for the first GPU sample", sinceMs: Date.now() };
  /** fields other parts add to every unit summary handed out (the crash-loop marker …) */
  private readonly unitFields = new Set<(u: UnitSummary) => Partial<UnitSummary> | null>();

  constructor(
    readonly host: HostAdapter,
    attributor: SampleAttributor,
    readonly gpuHistory: SampleHistory,
    opts: HubOptions = {},
  ) {
    this.hostname = opts.hostname ?? os.hostname();
    this.transitionsPerUnit = opts.transitionsPerUnit ?? 5_000;
    this.actionsKept = opts.actionsKept ?? 5_000;
    this.persistence = new HistoryPersistence(opts.store ?? null, opts.log ?? (() => undefined), opts.storeSampleStepMs);
    this.events = new EventRing(this.bootId, opts.eventRing);
    this.unitStates = new UnitStates(this.transitionsPerUnit, (t) => this.persistence.write((store) => store.addTransition(t)));
    this.actions = new ActionLog(this.bootId, this.actionsKept);
    this.gpu = new GpuBuffer(attributor, gpuHistory);
  }

  async start(): Promise<void> {
    this.persistence.restore(this.bootId, {
      transitionsPerUnit: this.transitionsPerUnit,
      actionsKept: this.actionsKept,
      transitions: (history) => this.unitStates.restore(history),
      actions: (actions) => this.actions.restore(actions),
      samples: (samples) => this.gpuHistory.restore?.(samples),
    });
    // GPU telemetry first: it must work even when systemd is unreachable.
    this.host.gpu.start(
      (raw) => void this.onRawSample(raw),
      (status) => {
        this.telemetry = status;
        this.emitStatus();
      },
    );
    await this.host.systemd.start((e) => this.onSystemdEvent(e));
    for (const u of this.host.systemd.list()) this.unitStates.observe(u);
  }

  async close(): Promise<void> {
    this.events.clearListeners();
    this.persistence.close(this.bootId);
    await Promise.allSettled([this.host.systemd.close(), this.host.gpu.close()]);
  }

  // --- reads ---------------------------------------------------------------------------

  units(): UnitSummary[] {
    return this.unitStates.list().map((u) => this.withUnitFields(u));
  }

  unit(name: string): UnitSummary | undefined {
    const u = this.unitStates.get(name);
    return u && this.withUnitFields(u);
  }

  /**
   * Another part of the agent adds fields to every unit summary the hub hands out (reads,
   * snapshots, unit events), e.g. the crash-loop marker. Returns a function that removes it.
   */
  addUnitFields(fields: (u: UnitSummary) => Partial<UnitSummary> | null): () => void {
    this.unitFields.add(fields);
    return () => this.unitFields.delete(fields);
  }

  /** What a unit's added fields say changed: send its summary again. */
  refreshUnit(name: string): void {
    const u = this.unit(name);
    if (u) this.emit({ kind: "unit", unit: u });
  }

  private withUnitFields(u: UnitSummary): UnitSummary {
    if (this.unitFields.size === 0) return u;
    let out = u;
    for (const fields of this.unitFields) {
      const extra = fields(u);
      if (extra) out = { ...out, ...extra };
    }
    return out;
  }

  systemdStatus(): BackendStatus {
    return this.host.systemd.status();
  }

  telemetryStatus(): BackendStatus {
    return this.telemetry;
  }

  /** Where history goes: "disk" (kept across restarts), "memory" (no store), "failing" (writes fail). */
  historyState(): "disk" | "memory" | "failing" {
    return this.persistence.state();
  }

  gpuNow(): GpuSample | null {
    return this.gpu.latest();
  }

  timeline(unit: string, sinceUsec = 0): { transitions: UnitTransition[]; actions: ActionRecord[]; unobserved: ObservationGap[] } {
    return {
      transitions: this.unitStates.timeline(unit, sinceUsec),
      actions: this.actions.forUnit(unit, sinceUsec / 1000),
      unobserved: this.persistence.gaps().filter((g) => g.toMs * 1000 >= sinceUsec),
    };
  }

  /** Full GPU samples at or after sinceMs (at most the last ~2 min). */
  gpuRecent(sinceMs: number): GpuSample[] {
    return this.gpu.recent(sinceMs);
  }

  /** Job events of a unit still in the event ring, oldest first. */
  recentJobs(unit: string, limit = 20): JobEvent[] {
    return this.events
      .findRecent((e) => e.kind === "job" && e.job.unit === unit, limit)
      .flatMap((e) => (e.kind === "job" ? [e.job] : []))
      .reverse();
  }

  recentActions(limit = 100): ActionRecord[] {
    return this.actions.recent(limit);
  }

  snapshot(): AgentEvent {
    return {
      kind: "snapshot",
      bootId: this.bootId,
      agentVersion: AGENT_VERSION,
      host: this.hostname,
      simulated: this.host.kind === "simulator",
      units: this.units(),
      systemd: this.systemdStatus(),
      telemetry: this.telemetry,
      gpu: this.gpu.latest(),
      atMs: Date.now(),
    };
  }

  // --- actions -------------------------------------------------------------------------

  recordAction(a: ActionInput, result: ActionResult): ActionRecord {
    const record = this.actions.record(a, result);
    this.persistence.write((store) => store.saveAction(record));
    this.emit({ kind: "action", action: { ...record } });
    return record;
  }

  // --- event stream --------------------------------------------------------------------

  /** An event from another part of the agent (GPU-aware operations, GPU faults) into the stream. */
  publish(event: AgentEvent): void {
    this.emit(event);
  }

  /** Events after `lastEventId`, or null when the caller must start from a snapshot. */
  replayAfter(lastEventId: string | null | undefined): StoredEvent[] | null {
    return this.events.replayAfter(lastEventId);
  }

  currentEventId(): string {
    return this.events.currentEventId();
  }

  /** `internal`: a part of the agent (crash loops, operations …), not counted as an event stream. */
  subscribe(listener: (e: StoredEvent) => void, opts: { internal?: boolean } = {}): () => void {
    return this.events.subscribe(listener, opts.internal === true);
  }

  subscriberCount(): number {
    return this.events.subscriberCount();
  }

  private emit(event: AgentEvent): void {
    this.events.emit(event);
  }

  private emitStatus(): void {
    this.emit({ kind: "status", systemd: this.systemdStatus(), telemetry: this.telemetry });
  }

  // --- adapter input -------------------------------------------------------------------

  private onSystemdEvent(e: SystemdEvent): void {
    switch (e.type) {
      case "transition": {
        const rebuild = (last: UnitTransition) => this.host.systemd.transitionsSince?.(e.transition.unit, last);
        for (const t of this.unitStates.apply(e.transition, rebuild)) this.emit({ kind: "transition", transition: t });
        return;
      }
      case "unit":
        this.unitStates.observe(e.unit);
        this.emit({ kind: "unit", unit: this.withUnitFields(e.unit) });
        return;
      case "unit-removed":
        this.unitStates.remove(e.name);
        this.emit({ kind: "unit-removed", name: e.name });
        return;
      case "job": {
        this.emit({ kind: "job", job: e.job });
        const action = e.job.phase === "finished" ? this.actions.jobFinished(e.job) : null;
        if (action) {
          this.persistence.write((store) => store.saveAction(action));
          this.emit({ kind: "action", action: { ...action } });
        }
        return;
      }
      case "status":
        this.emitStatus();
        return;
    }
  }

  private async onRawSample(raw: GpuRawSample): Promise<void> {
    try {
      const sample = await this.gpu.ingest(raw);
      if (!sample) return;
      this.persistence.sample(sample);
      this.emit({ kind: "gpu", sample });
    } catch (err) {
      this.telemetry = { state: "error", message: `attribution failed: ${(err as Error).message}`, sinceMs: Date.now() };
      this.emitStatus();
    }
  }
}
