/**
 * The agent's core: one place that holds what the adapters reported (unit states, their
 * transition history, jobs, who acted and why, GPU samples) and hands it out as a numbered
 * event stream. Event ids carry a boot id, so a client that reconnects after an agent
 * restart is recognised and sent a fresh snapshot instead of a wrong replay.
 */
import { randomBytes } from "node:crypto";
import os from "node:os";
import type { HistoryStore } from "./historyStore";
import { quietLog, type QuietLog } from "./quietLog";
import type { ActionRecord, AgentEvent, StoredEvent } from "../contract/events";
import { compactSample } from "./sampleHistory";
import type { BackendStatus, GpuRawSample, GpuSample, JobEvent, ObservationGap, UnitSummary, UnitTransition } from "../contract/types";
import type { HostAdapter, SystemdEvent } from "./adapter";

/** Turns raw nvidia-smi samples into attributed ones (memory → process → unit). */
export interface SampleAttributor {
  attribute(raw: GpuRawSample): Promise<GpuSample>;
}

/** Keeps GPU samples for the charts. */
export interface SampleHistory {
  push(sample: GpuSample): void;
  since(sinceMs: number, uuid?: string): GpuSample[];
  /** samples from before this agent started (the history store), oldest first */
  restore?(samples: GpuSample[]): void;
}

export interface HubOptions {
  eventRing?: number;
  transitionsPerUnit?: number;
  actionsKept?: number;
  /** history on disk: restored at start, written as things happen; none = memory only */
  store?: HistoryStore | null;
  /** one GPU sample is written to the store per this many ms (default 10 s) */
  storeSampleStepMs?: number;
  log?: (message: string) => void;
}

type Listener = (e: StoredEvent) => void;

export class Hub {
  readonly bootId = randomBytes(6).toString("hex");
  readonly hostname = os.hostname();
  private seq = 0;
  private ring: StoredEvent[] = [];
  private listeners = new Set<Listener>();
  private unitState = new Map<string, UnitSummary>();
  private transitions = new Map<string, UnitTransition[]>();
  private actions: ActionRecord[] = [];
  private actionsByJob = new Map<number, ActionRecord>();
  private latestGpu: GpuSample | null = null;
  /** full samples of the last ~2 min (diagnosis needs holders' PIDs and exit times) */
  private recentGpu: GpuSample[] = [];
  private telemetry: BackendStatus = { state: "connecting", message: "waiting for the first GPU sample", sinceMs: Date.now() };
  private attributing = false;
  private readonly eventRing: number;
  private readonly transitionsPerUnit: number;
  private readonly actionsKept: number;
  private readonly store: HistoryStore | null;
  private readonly storeSampleStepMs: number;
  private readonly log: (message: string) => void;
  private readonly storeLog: QuietLog;
  private lastStoredSampleMs = 0;
  private storeWriteFailing = false;
  private lastPruneMs = 0;
  private runTouchTimer: ReturnType<typeof setInterval> | null = null;
  /** units with history from before this start whose first observation is still to come */
  private restoredUnits = new Set<string>();
  /** spans between earlier runs of the agent (from the store), oldest first */
  private unobserved: ObservationGap[] = [];

  constructor(
    readonly host: HostAdapter,
    private attributor: SampleAttributor,
    readonly gpuHistory: SampleHistory,
    opts: HubOptions = {},
  ) {
    this.eventRing = opts.eventRing ?? 20_000;
    this.transitionsPerUnit = opts.transitionsPerUnit ?? 5_000;
    this.actionsKept = opts.actionsKept ?? 5_000;
    this.store = opts.store ?? null;
    this.storeSampleStepMs = opts.storeSampleStepMs ?? 10_000;
    this.log = opts.log ?? (() => undefined);
    this.storeLog = quietLog(this.log);
  }

  async start(): Promise<void> {
    this.restoreHistory();
    // GPU telemetry first: it must work even when systemd is unreachable.
    this.host.gpu.start(
      (raw) => void this.onRawSample(raw),
      (status) => {
        this.telemetry = status;
        this.emitStatus();
      },
    );
    await this.host.systemd.start((e) => this.onSystemdEvent(e));
    for (const u of this.host.systemd.list()) this.observeUnit(u);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    if (this.runTouchTimer) clearInterval(this.runTouchTimer);
    this.persist((store) => store.touchRun(this.bootId, Date.now()));
    await Promise.allSettled([this.host.systemd.close(), this.host.gpu.close()]);
  }

  // --- reads ---------------------------------------------------------------------------

  units(): UnitSummary[] {
    return [...this.unitState.values()];
  }

  unit(name: string): UnitSummary | undefined {
    return this.unitState.get(name);
  }

  systemdStatus(): BackendStatus {
    return this.host.systemd.status();
  }

  telemetryStatus(): BackendStatus {
    return this.telemetry;
  }

  /** Where history goes: "disk" (kept across restarts), "memory" (no store), "failing" (writes fail). */
  historyState(): "disk" | "memory" | "failing" {
    return !this.store ? "memory" : this.storeWriteFailing ? "failing" : "disk";
  }

  gpuNow(): GpuSample | null {
    return this.latestGpu;
  }

  timeline(unit: string, sinceUsec = 0): { transitions: UnitTransition[]; actions: ActionRecord[]; unobserved: ObservationGap[] } {
    const transitions = (this.transitions.get(unit) ?? []).filter((t) => t.atUsec >= sinceUsec);
    // keep the transition in force at `since` so the first segment can be drawn
    const all = this.transitions.get(unit) ?? [];
    const before = all.filter((t) => t.atUsec < sinceUsec).at(-1);
    return {
      transitions: before ? [before, ...transitions] : transitions,
      actions: this.actions.filter((a) => a.unit === unit && a.atMs * 1000 >= sinceUsec),
      unobserved: this.unobserved.filter((g) => g.toMs * 1000 >= sinceUsec),
    };
  }

  /** Full GPU samples at or after sinceMs (at most the last ~2 min). */
  gpuRecent(sinceMs: number): GpuSample[] {
    return this.recentGpu.filter((s) => s.atMs >= sinceMs);
  }

  /** Job events of a unit still in the event ring, oldest first. */
  recentJobs(unit: string, limit = 20): JobEvent[] {
    const jobs: JobEvent[] = [];
    for (let i = this.ring.length - 1; i >= 0 && jobs.length < limit; i--) {
      const e = this.ring[i]!.event;
      if (e.kind === "job" && e.job.unit === unit) jobs.push(e.job);
    }
    return jobs.reverse();
  }

  recentActions(limit = 100): ActionRecord[] {
    return this.actions.slice(-limit);
  }

  snapshot(): AgentEvent {
    return {
      kind: "snapshot",
      bootId: this.bootId,
      host: this.hostname,
      simulated: this.host.kind === "simulator",
      units: this.units(),
      systemd: this.systemdStatus(),
      telemetry: this.telemetry,
      gpu: this.latestGpu,
      atMs: Date.now(),
    };
  }

  // --- actions -------------------------------------------------------------------------

  recordAction(a: Omit<ActionRecord, "id" | "outcome" | "error" | "atMs" | "jobId">, result: { jobId: number | null } | { error: string }): ActionRecord {
    const record: ActionRecord = {
      ...a,
      id: `${this.bootId}-a${this.actions.length + 1}-${Date.now().toString(36)}`,
      atMs: Date.now(),
      jobId: "jobId" in result ? result.jobId : null,
      outcome: "error" in result ? "error" : result.jobId === null ? "done" : null,
      error: "error" in result ? result.error : null,
    };
    this.actions.push(record);
    if (this.actions.length > this.actionsKept) this.actions.splice(0, this.actions.length - this.actionsKept);
    if (record.jobId !== null) {
      this.actionsByJob.set(record.jobId, record);
      const early = this.finishedJobs.get(record.jobId);
      if (early) record.outcome = early;
    }
    this.persist((store) => store.saveAction(record));
    this.emit({ kind: "action", action: { ...record } });
    return record;
  }

  /** results of jobs that finished before the caller got to record its action */
  private finishedJobs = new Map<number, string>();

  // --- event stream --------------------------------------------------------------------

  /**
   * Events after `lastEventId`, or null when that id is from another boot or already
   * dropped from the ring (the caller then starts from a snapshot).
   */
  replayAfter(lastEventId: string | null | undefined): StoredEvent[] | null {
    if (!lastEventId) return null;
    const m = /^([0-9a-f]+)-(\d+)$/.exec(lastEventId);
    if (!m || m[1] !== this.bootId) return null;
    const seq = Number(m[2]);
    if (seq > this.seq) return null;
    const first = this.ring[0];
    if (seq === this.seq) return [];
    if (!first || seqOf(first.id) > seq + 1) return null;
    return this.ring.filter((e) => seqOf(e.id) > seq);
  }

  currentEventId(): string {
    return `${this.bootId}-${this.seq}`;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  subscriberCount(): number {
    return this.listeners.size;
  }

  private emit(event: AgentEvent): void {
    this.seq += 1;
    const stored = { id: `${this.bootId}-${this.seq}`, event };
    this.ring.push(stored);
    if (this.ring.length > this.eventRing) this.ring.splice(0, this.ring.length - this.eventRing);
    for (const l of this.listeners) l(stored);
  }

  private emitStatus(): void {
    this.emit({ kind: "status", systemd: this.systemdStatus(), telemetry: this.telemetry });
  }

  // --- adapter input -------------------------------------------------------------------

  private observeUnit(u: UnitSummary): void {
    const known = this.unitState.get(u.name);
    this.unitState.set(u.name, u);
    if (!known && !this.transitions.has(u.name)) {
      // First sight of the unit: its current state, since systemd's own timestamp.
      this.pushTransition({
        unit: u.name,
        atUsec: u.stateChangeUsec,
        from: null,
        to: { activeState: u.activeState, subState: u.subState },
        result: u.result,
        mainPid: u.mainPid,
        controlPid: u.controlPid,
        nRestarts: u.nRestarts,
        inRestartCycle: false,
      });
    }
  }

  private pushTransition(t: UnitTransition): boolean {
    let list = this.transitions.get(t.unit);
    if (!list) this.transitions.set(t.unit, (list = []));
    const last = list.at(-1);
    if (last && last.to.activeState === t.to.activeState && last.to.subState === t.to.subState) return false;
    if (last && t.atUsec < last.atUsec) {
      // out-of-order delivery (e.g. replay after a reconnect): keep the list sorted
      const i = list.findIndex((x) => x.atUsec > t.atUsec);
      list.splice(i, 0, t);
    } else list.push(t);
    if (list.length > this.transitionsPerUnit) list.splice(0, list.length - this.transitionsPerUnit);
    this.persist((store) => store.addTransition(t));
    return true;
  }

  // --- history store -------------------------------------------------------------------

  /** Load what the store kept from earlier runs; a damaged store costs history, never the agent. */
  private restoreHistory(): void {
    const store = this.store;
    if (!store) return;
    const now = Date.now();
    try {
      store.prune(now);
      this.lastPruneMs = now;
      const transitions = store.loadTransitions(this.transitionsPerUnit);
      for (const [unit, list] of transitions) {
        this.transitions.set(unit, list);
        this.restoredUnits.add(unit);
      }
      for (const a of store.loadActions(now - store.retention.eventsMs, this.actionsKept)) {
        // its job's end was not seen: say so rather than show it running forever
        this.actions.push(a.outcome === null ? { ...a, outcome: "unknown", error: a.error ?? "the agent restarted before this job finished" } : a);
      }
      store.beginRun(this.bootId, now);
      this.unobserved = store.loadGaps();
      // "last known alive" for the next run's gap (a crash makes it early by at most this
      // period), and hourly pruning, which must not depend on GPU samples arriving
      this.runTouchTimer = setInterval(() => this.housekeep(Date.now()), 5_000);
      this.runTouchTimer.unref?.();
      const samples = store.loadSamples(now - store.retention.samplesMs);
      this.gpuHistory.restore?.(samples);
      const n = [...transitions.values()].reduce((sum, l) => sum + l.length, 0);
      this.log(
        `history: restored ${n} transitions of ${transitions.size} units, ${this.actions.length} actions, ${samples.length} GPU samples from ${store.file}`,
      );
    } catch (err) {
      this.log(`history: could not restore from ${store.file}: ${(err as Error).message}; starting with an empty timeline`);
    }
  }

  private persist(write: (store: HistoryStore) => void): void {
    if (!this.store) return;
    try {
      write(this.store);
      this.storeWriteFailing = false;
      this.storeLog.recovered("history: writing to the store works again");
    } catch (err) {
      this.storeWriteFailing = true;
      this.storeLog.repeat(
        "write",
        `history: cannot write to ${this.store.file} (${(err as Error).message}); history is kept in memory only until it works again`,
      );
    }
  }

  private persistSample(sample: GpuSample): void {
    if (!this.store || sample.atMs - this.lastStoredSampleMs < this.storeSampleStepMs) return;
    this.lastStoredSampleMs = sample.atMs;
    this.persist((store) => store.addSample(compactSample(sample)));
  }

  private housekeep(nowMs: number): void {
    this.persist((store) => store.touchRun(this.bootId, nowMs));
    if (nowMs - this.lastPruneMs >= 3600_000) {
      this.lastPruneMs = nowMs;
      this.persist((store) => void store.prune(nowMs));
    }
  }

  /**
   * The first sight of a unit that has history from an earlier run: what happened while the
   * agent was not running, rebuilt from systemd's timestamps where the adapter can, else one
   * step from the last recorded state to the current one.
   */
  private stepsSinceRestore(first: UnitTransition): UnitTransition[] {
    const last = this.transitions.get(first.unit)?.at(-1);
    if (!last) return [first];
    const rebuilt = this.host.systemd.transitionsSince?.(first.unit, last);
    return rebuilt ?? [{ ...first, from: last.to }];
  }

  private onSystemdEvent(e: SystemdEvent): void {
    switch (e.type) {
      case "transition": {
        if (!this.transitions.has(e.transition.unit) && e.transition.from) {
          this.transitions.set(e.transition.unit, []);
        }
        const restored = e.transition.from === null && this.restoredUnits.delete(e.transition.unit);
        for (const t of restored ? this.stepsSinceRestore(e.transition) : [e.transition]) {
          if (this.pushTransition(t)) this.emit({ kind: "transition", transition: t });
        }
        return;
      }
      case "unit":
        this.observeUnit(e.unit);
        this.emit({ kind: "unit", unit: e.unit });
        return;
      case "unit-removed":
        this.unitState.delete(e.name);
        this.emit({ kind: "unit-removed", name: e.name });
        return;
      case "job": {
        this.emit({ kind: "job", job: e.job });
        if (e.job.phase === "finished") {
          const action = this.actionsByJob.get(e.job.jobId);
          const result = e.job.result ?? "done";
          if (action) {
            action.outcome = result;
            this.actionsByJob.delete(e.job.jobId);
            this.persist((store) => store.saveAction(action));
            this.emit({ kind: "action", action: { ...action } });
          } else {
            this.finishedJobs.set(e.job.jobId, result);
            if (this.finishedJobs.size > 1000) this.finishedJobs.delete(this.finishedJobs.keys().next().value!);
          }
        }
        return;
      }
      case "status":
        this.emitStatus();
        return;
    }
  }

  private async onRawSample(raw: GpuRawSample): Promise<void> {
    // Attribution reads /proc; never let two overlap (a slow /proc must not pile up work).
    if (this.attributing) return;
    this.attributing = true;
    try {
      const sample = await this.attributor.attribute(raw);
      this.latestGpu = sample;
      this.recentGpu.push(sample);
      while (this.recentGpu.length > 0 && this.recentGpu[0]!.atMs < sample.atMs - 120_000) this.recentGpu.shift();
      this.gpuHistory.push(sample);
      this.persistSample(sample);
      this.emit({ kind: "gpu", sample });
    } catch (err) {
      this.telemetry = { state: "error", message: `attribution failed: ${(err as Error).message}`, sinceMs: Date.now() };
      this.emitStatus();
    } finally {
      this.attributing = false;
    }
  }
}

function seqOf(id: string): number {
  return Number(id.slice(id.lastIndexOf("-") + 1));
}
