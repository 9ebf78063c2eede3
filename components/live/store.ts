/**
 * The browser's live picture of the host, fed by `events.watch`. Pages read from it through
 * `useLive()`; it keeps the last event id so a new stream resumes where the old one stopped.
 */
import type { ActionRecord, AgentEvent } from "@/server/contract/events";
import type { BackendStatus, GpuSample, JobEvent, UnitSummary, UnitTransition } from "@/server/contract/types";

export type ConnectionState = "connecting" | "live" | "reconnecting" | "stale";

const GPU_RECENT_MS = 30 * 60_000;
const TRANSITIONS_KEPT = 5_000;

export class LiveStore {
  connection: ConnectionState = "connecting";
  lastEventId: string | null = null;
  lastEventAtMs = 0;
  bootId: string | null = null;
  host = "";
  simulated = false;
  units = new Map<string, UnitSummary>();
  systemd: BackendStatus | null = null;
  telemetry: BackendStatus | null = null;
  gpu: GpuSample | null = null;
  gpuRecent: GpuSample[] = [];
  /** transitions seen live since the page loaded (timelines merge them with history) */
  transitions: UnitTransition[] = [];
  actions = new Map<string, ActionRecord>();
  jobs = new Map<number, JobEvent>();
  /** snapshot count: pages refetch history when it changes (agent restarted, or ring gap) */
  snapshots = 0;
  version = 0;
  private listeners = new Set<() => void>();

  subscribe = (l: () => void) => {
    this.listeners.add(l);
    return () => {
      this.listeners.delete(l);
    };
  };

  getVersion = () => this.version;

  private changed(): void {
    this.version++;
    for (const l of this.listeners) l();
  }

  setConnection(state: ConnectionState): void {
    if (this.connection === state) return;
    this.connection = state;
    this.changed();
  }

  apply(id: string, e: AgentEvent): void {
    this.lastEventId = id;
    this.lastEventAtMs = Date.now();
    switch (e.kind) {
      case "snapshot":
        this.bootId = e.bootId;
        this.host = e.host;
        this.simulated = e.simulated;
        this.units = new Map(e.units.map((u) => [u.name, u]));
        this.systemd = e.systemd;
        this.telemetry = e.telemetry;
        if (e.gpu) this.pushGpu(e.gpu);
        this.snapshots++;
        break;
      case "unit":
        this.units.set(e.unit.name, e.unit);
        break;
      case "unit-removed":
        this.units.delete(e.name);
        break;
      case "transition":
        this.transitions.push(e.transition);
        if (this.transitions.length > TRANSITIONS_KEPT) this.transitions.splice(0, this.transitions.length - TRANSITIONS_KEPT);
        break;
      case "job":
        this.jobs.set(e.job.jobId, e.job);
        if (this.jobs.size > 500) this.jobs.delete(this.jobs.keys().next().value!);
        break;
      case "action":
        this.actions.set(e.action.id, e.action);
        break;
      case "gpu":
        this.pushGpu(e.sample);
        break;
      case "status":
        this.systemd = e.systemd;
        this.telemetry = e.telemetry;
        break;
    }
    this.changed();
  }

  private pushGpu(sample: GpuSample): void {
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
