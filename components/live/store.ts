/**
 * The browser's live picture of what the page shows, fed by one `events.watch` stream of one
 * scope: the whole fleet (every host's summary and units), one host, or one unit of a host.
 * Pages read it through `useLive()`; it keeps the last event id so a new stream resumes where
 * the old one stopped. State is kept per host (see ./hostLive.ts).
 */
import type { HostSummary, HostUnit, PanelEvent, WatchScope } from "@/server/contract/fleet";
import { HostLive } from "./hostLive";

/** The browser's stream to the panel: "off" where the page watches nothing (sign-in, redirects). */
export type ConnectionState = "off" | "connecting" | "live" | "reconnecting" | "stale";

export class LiveStore {
  connection: ConnectionState;
  lastEventId: string | null = null;
  lastEventAtMs = 0;
  /** why the stream cannot be opened (e.g. the host does not exist); null while it can */
  problem: string | null = null;
  /** hosts by name; in host and unit scopes only the watched host */
  readonly hosts = new Map<string, HostLive>();
  /** snapshots of any kind seen */
  snapshots = 0;
  version = 0;
  private listeners = new Set<() => void>();

  constructor(readonly scope: WatchScope | null) {
    this.connection = scope ? "connecting" : "off";
  }

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

  setProblem(problem: string | null): void {
    if (this.problem === problem) return;
    this.problem = problem;
    this.changed();
  }

  host(name: string): HostLive | undefined {
    return this.hosts.get(name);
  }

  /** Every host's summary, by name (hosts not heard of yet are left out). */
  summaries(): HostSummary[] {
    return [...this.hosts.values()].flatMap((h) => (h.summary ? [h.summary] : [])).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Every unit of every host, with its host. */
  allUnits(): HostUnit[] {
    return [...this.hosts.values()].flatMap((h) => [...h.units.values()].map((u) => ({ ...u, host: h.name })));
  }

  /** A host removed on the Hosts page: the fleet stream has no event for that. */
  forgetHost(name: string): void {
    if (this.hosts.delete(name)) this.changed();
  }

  apply(id: string, e: PanelEvent): void {
    this.lastEventId = id;
    this.lastEventAtMs = Date.now();
    this.problem = null;
    if (e.kind === "fleet-snapshot") {
      this.hosts.clear();
      for (const s of e.hosts) this.ensure(s.name)!.summary = s;
      for (const { host, ...unit } of e.units) this.ensure(host)?.units.set(unit.name, unit);
      this.snapshots++;
    } else if (e.kind === "host-removed") {
      this.hosts.delete(e.host);
    } else if (e.kind === "hosts") {
      for (const s of e.hosts) {
        const h = this.ensure(s.name);
        if (h) h.summary = s;
      }
    } else {
      const h = this.ensure(e.host);
      if (h) this.applyToHost(h, e);
    }
    this.changed();
  }

  private applyToHost(h: HostLive, e: Exclude<PanelEvent, { kind: "fleet-snapshot" | "hosts" | "host-removed" }>): void {
    switch (e.kind) {
      case "host-snapshot":
        h.applySnapshot(e);
        this.snapshots++;
        break;
      case "host-units":
        h.units = new Map(e.units.map((u) => [u.name, u]));
        break;
      case "unit":
        h.setUnit(e.unit);
        break;
      case "unit-removed":
        h.units.delete(e.name);
        break;
      case "transition":
        h.pushTransition(e.transition);
        break;
      case "job":
        h.pushJob(e.job);
        break;
      case "action":
        h.actions.set(e.action.id, e.action);
        break;
      case "gpu":
        h.pushGpu(e.sample);
        break;
      case "status":
        h.systemd = e.systemd;
        h.telemetry = e.telemetry;
        break;
      case "readiness":
        h.setReadiness(e.unit, e.readiness);
        break;
      case "operation":
        h.pushOperation(e.operation);
        break;
      case "fault":
        h.pushFault(e.fault);
        break;
    }
  }

  /** The host's state, created on first mention; undefined for a host this scope does not watch. */
  private ensure(name: string): HostLive | undefined {
    if (this.scope && this.scope.watch !== "fleet" && this.scope.host !== name) return undefined;
    let h = this.hosts.get(name);
    if (!h) this.hosts.set(name, (h = new HostLive(name)));
    return h;
  }
}
