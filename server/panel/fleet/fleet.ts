/**
 * The panel's fleet hub: one HostLink (one live agent stream) per configured host, the hosts
 * admins add or remove at run time, and the fan-out to browsers. Host summaries that changed are
 * sent in one batch per tick (once a second by default), so a fleet of 50 hosts sampling GPUs at
 * 1 Hz costs each fleet viewer one event a second, not fifty.
 */
import type { HostSummary, WatchScope } from "../../contract/fleet";
import type { AgentEvent } from "../../contract/events";
import { Fanout, type StreamItem } from "./fanout";
import { HostLink, type HostLinkOptions } from "./hostLink";
import type { HostConfig } from "./hostsConfig";

export interface FleetOptions {
  link?: HostLinkOptions;
  /** how often changed host summaries go out (default 1 s) */
  summaryIntervalMs?: number;
  viewerQueueLimit?: number;
}

/** Every agent event of every host, for server-side consumers (the audit log, alerts). */
export type HostEventListener = (host: string, event: AgentEvent) => void;

export class Fleet {
  private readonly links = new Map<string, HostLink>();
  private readonly unsubscribe = new Map<string, () => void>();
  private readonly dirty = new Set<HostLink>();
  private readonly eventListeners = new Set<HostEventListener>();
  private readonly fanout: Fanout;
  private timer: ReturnType<typeof setInterval> | null = null;
  private started = false;

  constructor(
    hosts: HostConfig[],
    private readonly opts: FleetOptions = {},
  ) {
    this.fanout = new Fanout({ get: (n) => this.links.get(n), all: () => this.all() }, opts.viewerQueueLimit);
    for (const h of hosts) this.attach(h);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    for (const link of this.links.values()) link.start();
    this.timer = setInterval(() => this.flushSummaries(), this.opts.summaryIntervalMs ?? 1000);
    this.timer.unref?.();
  }

  stop(): void {
    this.started = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const name of [...this.links.keys()]) this.detach(name);
  }

  get(name: string): HostLink | undefined {
    return this.links.get(name);
  }

  all(): HostLink[] {
    return [...this.links.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  summaries(): HostSummary[] {
    return this.all().map((l) => l.summary());
  }

  /** Which configured host has a unit of this name (the redirect of an old single-host link). */
  hostsWithUnit(unit: string): string[] {
    return this.all()
      .filter((l) => l.units.has(unit))
      .map((l) => l.name);
  }

  onHostEvent(listener: HostEventListener): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** Add a host, or replace one with a new address or token (its stream starts afresh). */
  put(config: HostConfig): HostLink {
    if (this.links.has(config.name)) this.detach(config.name);
    const link = this.attach(config);
    if (this.started) link.start();
    this.dirty.add(link);
    return link;
  }

  remove(name: string): boolean {
    if (!this.links.has(name)) return false;
    this.detach(name);
    this.fanout.hostRemoved(name);
    return true;
  }

  watch(scope: WatchScope, lastEventId: string | null, signal: AbortSignal): AsyncGenerator<StreamItem> {
    return this.fanout.watch(scope, lastEventId, signal);
  }

  /** A viewer pushed to (../sseWriter.ts): see Fanout.subscribe. */
  subscribe(scope: WatchScope, lastEventId: string | null, deliver: (item: StreamItem) => void): { resync(): StreamItem; close(): void } {
    return this.fanout.subscribe(scope, lastEventId, deliver);
  }

  viewerCount(): number {
    return this.fanout.subscriberCount();
  }

  private attach(config: HostConfig): HostLink {
    const link = new HostLink(config, this.opts.link);
    this.links.set(config.name, link);
    const off = link.onUpdate(({ entry, raw }) => {
      this.dirty.add(link);
      if (entry) this.fanout.hostEvent(link, entry);
      if (raw) for (const l of this.eventListeners) l(link.name, raw);
    });
    this.unsubscribe.set(config.name, off);
    return link;
  }

  private detach(name: string): void {
    const link = this.links.get(name);
    this.unsubscribe.get(name)?.();
    this.unsubscribe.delete(name);
    link?.stop();
    this.links.delete(name);
    if (link) this.dirty.delete(link);
  }

  private flushSummaries(): void {
    if (this.dirty.size === 0) return;
    const changed = [...this.dirty].filter((l) => this.links.get(l.name) === l);
    this.dirty.clear();
    this.fanout.summaries(changed);
  }
}
