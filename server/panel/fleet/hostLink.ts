/**
 * The panel's one live subscription to one agent (`events.watch`), whether 0 or 1,000 browsers
 * watch that host. It keeps what the host last said (units, GPU sample, backend status), its own
 * ring of events for browsers that resume, and the connection state people see: connecting,
 * connected, or down since … with the error. A stream that fails is re-opened with backoff,
 * resuming after the last agent event id (the agent replays what was missed, or sends a fresh
 * snapshot after its own restart). One slow or dead agent never blocks another: each link has
 * its own stream and timers, and nothing here awaits another host.
 */
import { TRPCError } from "@trpc/server";
import { agentErrorMessage } from "../agentErrors";
import { createAgentClient, type AgentClient } from "../agentClient";
import { openAgentEventStream } from "../agentEventStream";
import { agentFetch } from "../agentTls";
import type { AgentEvent } from "../../contract/events";
import { hostEventId, type HostSnapshot, type HostState, type HostSummary, type PanelEvent } from "../../contract/fleet";
import type { BackendStatus, GpuSample, UnitSummary } from "../../contract/types";
import type { HostConfig } from "./hostsConfig";
import { HostRing, type RingEntry } from "./hostRing";
import { summarize } from "./summary";

const LINK_ACTOR = { user: "gpudeck-panel", role: "viewer" as const, unitPatterns: [] };

export interface HostLinkOptions {
  log?: (msg: string) => void;
  clock?: () => number;
  /** Backoff for re-opening a failed stream. Default 1 s doubling to 30 s. */
  retryMinMs?: number;
  retryMaxMs?: number;
  ringSize?: number;
  /** Demo mode: an agent that is not simulated is refused (never shown, never acted on). */
  requireSimulated?: boolean;
}

/** What a link tells the fleet: an event for browsers (with its id), or just "my summary changed". */
export type HostLinkListener = (update: { entry: RingEntry | null; raw: AgentEvent | null }) => void;

export class HostLink {
  readonly name: string;
  private readonly agentClient: AgentClient;
  state: HostState = "connecting";
  sinceMs: number;
  error: string | null = null;
  agentVersion: string | null = null;
  hostname: string | null = null;
  simulated = false;
  /** Demo mode refused this agent: its snapshot said it is a real host. */
  refusedReal = false;
  bootId: string | null = null;
  units = new Map<string, UnitSummary>();
  gpu: GpuSample | null = null;
  systemd: BackendStatus | null = null;
  telemetry: BackendStatus | null = null;
  /** the last agent event id seen (resume point for the agent stream) */
  private lastAgentId: string | null = null;
  private lastSeq = 0;
  private readonly ring: HostRing;
  private readonly listeners = new Set<HostLinkListener>();
  private sub: { close(): void } | null = null;
  private readonly streamFetch: typeof fetch;
  private retry: ReturnType<typeof setTimeout> | null = null;
  private attempt = 0;
  private stopped = true;
  private cachedSummary: HostSummary | null = null;
  private readonly log: (msg: string) => void;
  private readonly clock: () => number;

  constructor(
    readonly config: HostConfig,
    private readonly opts: HostLinkOptions = {},
  ) {
    this.name = config.name;
    this.log = opts.log ?? ((m) => console.error(`[panel] ${m}`));
    this.clock = opts.clock ?? Date.now;
    this.sinceMs = this.clock();
    this.agentClient = createAgentClient({ url: config.url, token: config.token, tls: config.tls });
    this.streamFetch = agentFetch(config.tls ?? null);
    this.ring = new HostRing(opts.ringSize);
  }

  /**
   * The agent's client, for calls on behalf of a browser. In demo mode only while the agent is
   * connected and said it is simulated: a demo panel has no login, so a real host (or one not
   * heard from yet) must never be called.
   */
  get client(): AgentClient {
    if (this.opts.requireSimulated && !(this.state === "connected" && this.simulated)) {
      throw new TRPCError({
        code: "FORBIDDEN",
        message: this.refusedReal
          ? `Not allowed: ${demoRefusal(this.config.url)}.`
          : `Not allowed: demo mode acts only on simulated hosts, and host ${this.name}'s agent has not said it is one yet (${this.state}); try again once it is connected.`,
      });
    }
    return this.agentClient;
  }

  /** Where errors say the agent and its token are (never the token). */
  get errorContext() {
    return { agentUrl: this.config.url, tokenSource: this.config.tokenSource };
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
    this.sub?.close();
    this.sub = null;
    this.listeners.clear();
  }

  onUpdate(listener: HostLinkListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  summary(): HostSummary {
    this.cachedSummary ??= summarize(this);
    return this.cachedSummary;
  }

  /** The id of the last event the panel has of this host (what a snapshot stands for). */
  currentId(): string {
    return hostEventId(this.name, `${this.bootId ?? ""}-${this.lastSeq}`);
  }

  /** The host as it is now; for one unit's page, only that unit. */
  snapshot(unit?: string): HostSnapshot {
    const units = unit ? [...this.units.values()].filter((u) => u.name === unit) : [...this.units.values()];
    return {
      kind: "host-snapshot",
      host: this.name,
      summary: this.summary(),
      bootId: this.bootId,
      units,
      systemd: this.systemd,
      telemetry: this.telemetry,
      gpu: this.gpu,
      atMs: this.clock(),
    };
  }

  /** Events after the agent position `seq` of `bootId`; null when only a snapshot can resume. */
  replayAfter(bootId: string, seq: number): RingEntry[] | null {
    if (bootId !== this.bootId) return null;
    if (seq >= this.lastSeq) return [];
    return this.ring.after(bootId, seq);
  }

  private connect(): void {
    if (this.stopped) return;
    // one stream per agent, read by the panel's own SSE client (../agentEventStream.ts), not tRPC's
    const sub = openAgentEventStream({ url: this.config.url, token: this.config.token, fetch: this.streamFetch }, this.lastAgentId, LINK_ACTOR, {
      onData: (id, data) => {
        if (this.sub === sub) this.received(id, data);
      },
      onError: (err) => {
        if (this.sub === sub) this.failed(err);
      },
      onComplete: () => {
        if (this.sub === sub) this.failed(new Error("the agent closed the event stream"));
      },
    });
    this.sub = sub;
  }

  private failed(err: unknown, message = agentErrorMessage(err, this.errorContext)): void {
    this.sub?.close();
    this.sub = null;
    if (this.stopped) return;
    this.setState("down", message);
    const min = this.opts.retryMinMs ?? 1000;
    const delay = Math.min(this.opts.retryMaxMs ?? 30_000, min * 2 ** this.attempt);
    this.attempt++;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.connect();
    }, delay);
    this.retry.unref?.();
  }

  private setState(state: HostState, error: string | null): void {
    if (state === this.state && error === this.error) return;
    if (state !== this.state) this.sinceMs = this.clock();
    if (state === "down" && error && error !== this.error) this.log(`host ${this.name}: ${error}`);
    if (state === "connected" && this.state === "down") this.log(`host ${this.name}: the agent's event stream is back (${this.config.url})`);
    this.state = state;
    this.error = error;
    this.changed(null, null);
  }

  private received(agentId: string, event: AgentEvent): void {
    if (this.opts.requireSimulated && event.kind === "snapshot" && !event.simulated) return this.refuseReal();
    this.lastAgentId = agentId;
    this.attempt = 0;
    const dash = agentId.lastIndexOf("-");
    const bootId = agentId.slice(0, dash);
    const seq = Number(agentId.slice(dash + 1));
    if (this.state !== "connected") {
      this.state = "connected";
      this.sinceMs = this.clock();
      if (this.error) this.log(`host ${this.name}: the agent's event stream is back (${this.config.url})`);
      this.error = null;
    }
    this.lastSeq = seq;
    const id = hostEventId(this.name, agentId);
    const panelEvent = this.absorb(event, bootId, seq);
    if (!panelEvent) {
      this.changed(null, event);
      return;
    }
    const entry: RingEntry = { seq, id, event: panelEvent, unit: unitOf(panelEvent) };
    if (panelEvent.kind !== "gpu" && panelEvent.kind !== "host-snapshot") this.ring.push(entry);
    this.changed(entry, event);
  }

  /** Demo mode, a real agent: forget all of it and retry later (it may be swapped for a simulated one). */
  private refuseReal(): void {
    this.refusedReal = true;
    this.simulated = false;
    this.lastAgentId = null;
    this.units = new Map();
    this.gpu = null;
    this.failed(null, demoRefusal(this.config.url));
  }

  /** Update what the panel knows of the host; the browser-facing event (null: nothing to pass on). */
  private absorb(e: AgentEvent, bootId: string, seq: number): PanelEvent | null {
    const host = this.name;
    switch (e.kind) {
      case "snapshot":
        this.bootId = e.bootId;
        this.agentVersion = e.agentVersion ?? null;
        this.hostname = e.host;
        this.simulated = e.simulated;
        this.refusedReal = false;
        this.units = new Map(e.units.map((u) => [u.name, u]));
        this.systemd = e.systemd;
        this.telemetry = e.telemetry;
        this.gpu = e.gpu;
        this.ring.reset(bootId, seq);
        this.cachedSummary = null;
        return this.snapshot();
      case "unit":
        this.units.set(e.unit.name, e.unit);
        return { kind: "unit", host, unit: e.unit };
      case "unit-removed":
        this.units.delete(e.name);
        return { kind: "unit-removed", host, name: e.name };
      case "transition":
        return { kind: "transition", host, transition: e.transition };
      case "job":
        return { kind: "job", host, job: e.job };
      case "action":
        // the source address stays in the audit log (operators and admins), not on everyone's stream
        return { kind: "action", host, action: { ...e.action, sourceAddr: null } };
      case "gpu":
        this.gpu = e.sample;
        return { kind: "gpu", host, sample: e.sample };
      case "status":
        this.systemd = e.systemd;
        this.telemetry = e.telemetry;
        return { kind: "status", host, systemd: e.systemd, telemetry: e.telemetry };
      case "operation":
        // the panel's name for the host, which operations.get({ host }) takes
        return { kind: "operation", host, operation: { ...e.operation, host } };
      case "fault":
        return { kind: "fault", host, fault: e.fault };
      case "readiness": {
        // the mirror's summary carries it too: units.list and fleet snapshots show it
        const u = this.units.get(e.unit);
        if (u) this.units.set(e.unit, { ...u, readiness: e.readiness });
        return { kind: "readiness", host, unit: e.unit, readiness: e.readiness };
      }
    }
  }

  private changed(entry: RingEntry | null, raw: AgentEvent | null): void {
    this.cachedSummary = null;
    for (const l of this.listeners) l({ entry, raw });
  }
}

export function demoRefusal(url: string): string {
  return `demo mode (GPUDECK_DEMO): the agent at ${url} runs on a real host, not a simulated one; a demo panel has no login and never shows or controls real hosts`;
}

function unitOf(e: PanelEvent): string | null {
  switch (e.kind) {
    case "unit":
      return e.unit.name;
    case "unit-removed":
      return e.name;
    case "transition":
      return e.transition.unit;
    case "job":
      return e.job.unit;
    case "action":
      return e.action.unit;
    case "operation":
      return e.operation.unit;
    case "fault":
      return e.fault.unit;
    case "readiness":
      return e.unit;
    default:
      return null;
  }
}
