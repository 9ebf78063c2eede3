/**
 * Browser streams of the panel's fleet hub: each viewer subscribes to what it looks at (the fleet,
 * one host, or one unit), and gets its events from the hub in-process. An event is serialized
 * once for all viewers of a scope (contract/wire.ts) and handed to each viewer by reference:
 * pushed to its socket writer (`subscribe`, ../sseWriter.ts) or queued in a bounded queue
 * (`watch`); a viewer that cannot keep up gets a fresh snapshot, never unbounded memory.
 */
import { randomBytes } from "node:crypto";
import type { PanelEvent, WatchScope } from "../../contract/fleet";
import { parseHostEventId } from "../../contract/fleet";
import { preserialized } from "../../contract/wire";
import { BoundedQueue, StreamOverflow } from "../../streams/boundedQueue";
import type { HostLink } from "./hostLink";
import type { RingEntry } from "./hostRing";

export interface StreamItem {
  id: string;
  data: PanelEvent;
}

interface Subscriber {
  scope: WatchScope;
  /** to this viewer: its queue (watch) or its socket writer (subscribe) */
  deliver: (item: StreamItem) => void;
  /** host/unit scopes resuming from a position this panel has not seen yet: skip up to it */
  skipThrough: { bootId: string; seq: number } | null;
}

/** Events a viewer may fall behind by before it gets a fresh snapshot instead. */
export const VIEWER_QUEUE_LIMIT = 500;
const FLEET_RING = 2_000;

export class Fanout {
  readonly bootId = randomBytes(6).toString("hex");
  private fleetSeq = 0;
  private fleetRing: StreamItem[] = [];
  private readonly fleetSubs = new Set<Subscriber>();
  private readonly hostSubs = new Map<string, Set<Subscriber>>();
  /** host → unit → viewers */
  private readonly unitSubs = new Map<string, Map<string, Set<Subscriber>>>();
  /**
   * Unit changes for the overview, coalesced per tick (host → unit → the latest of each kind):
   * a restart's dozen events (jobs, states, readiness stages) reach each overview viewer as at
   * most one `unit` and one `readiness` event per unit and tick, sent with the tick's summaries.
   */
  private pendingFleet = new Map<string, Map<string, { unit?: PanelEvent; readiness?: PanelEvent; removed?: PanelEvent }>>();
  /** the last snapshot made per host or host+unit, reused while the host has not changed (its position and summary) */
  private readonly snapshots = new Map<string, { item: StreamItem; summary: unknown }>();

  constructor(
    private readonly links: { get(name: string): HostLink | undefined; all(): HostLink[] },
    private readonly queueLimit = VIEWER_QUEUE_LIMIT,
  ) {}

  subscriberCount(): number {
    let n = this.fleetSubs.size;
    for (const s of this.hostSubs.values()) n += s.size;
    for (const units of this.unitSubs.values()) for (const s of units.values()) n += s.size;
    return n;
  }

  // --- input from the hosts -------------------------------------------------------------

  /** An event of host `link` (already in its ring when replayable): to its host and unit viewers, and units to the fleet. */
  hostEvent(link: HostLink, entry: RingEntry): void {
    const hostSubs = this.hostSubs.get(link.name);
    const e = entry.event;
    if (e.kind === "host-snapshot") {
      this.send(hostSubs, { id: entry.id, data: preserialized(e) });
      this.forUnitsOf(link.name, (unit, subs) => this.send(subs, { id: entry.id, data: preserialized(link.snapshot(unit)) }));
      this.pendingFleet.delete(link.name);
      this.fleetEvent({ kind: "host-units", host: link.name, units: e.units });
      return;
    }
    // serialized only when someone of this host or unit watches (50 hosts, nobody looking: no work)
    const unitSubs = this.unitSubs.get(link.name);
    if (hostSubs?.size || (unitSubs && (entry.unit === null ? unitSubs.size > 0 : unitSubs.get(entry.unit)?.size))) {
      const item = { id: entry.id, data: preserialized(e) };
      this.send(hostSubs, item);
      if (entry.unit === null) this.forUnitsOf(link.name, (_unit, subs) => this.send(subs, item));
      else this.send(unitSubs?.get(entry.unit), item);
    }
    if ((e.kind === "unit" || e.kind === "unit-removed" || e.kind === "readiness") && this.fleetSubs.size > 0) {
      let units = this.pendingFleet.get(link.name);
      if (!units) this.pendingFleet.set(link.name, (units = new Map()));
      const name = e.kind === "unit" ? e.unit.name : e.kind === "unit-removed" ? e.name : e.unit;
      const p = units.get(name) ?? {};
      if (e.kind === "unit-removed") units.set(name, { removed: e });
      else units.set(name, { ...p, removed: undefined, [e.kind]: e });
    } else if (e.kind === "unit" || e.kind === "unit-removed" || e.kind === "readiness") this.fleetEvent(e); // nobody on the overview: only its position moves
  }

  /** The overview's coalesced unit changes of this tick (see pendingFleet). */
  flushFleetUnits(): void {
    if (this.pendingFleet.size === 0) return;
    const pending = this.pendingFleet;
    this.pendingFleet = new Map();
    for (const units of pending.values()) {
      for (const p of units.values()) {
        if (p.removed) this.fleetEvent(p.removed);
        if (p.unit) this.fleetEvent(p.unit);
        if (p.readiness) this.fleetEvent(p.readiness);
      }
    }
  }

  /** Summaries that changed since the last tick: to the fleet, and to each host's own viewers. */
  summaries(links: HostLink[]): void {
    this.flushFleetUnits();
    if (links.length === 0) return;
    this.fleetEvent({ kind: "hosts", hosts: links.map((l) => l.summary()) });
    for (const link of links) {
      const hostSubs = this.hostSubs.get(link.name);
      if (!hostSubs?.size && !this.unitSubs.get(link.name)?.size) continue;
      const item = { id: link.currentId(), data: preserialized<PanelEvent>({ kind: "hosts", hosts: [link.summary()] }) };
      this.send(hostSubs, item);
      this.forUnitsOf(link.name, (_unit, subs) => this.send(subs, item));
    }
  }

  /** A host left the panel: fleet viewers forget it; its own viewers are told (their page says so). */
  hostRemoved(name: string): void {
    for (const key of this.snapshots.keys()) if (key === name || key.startsWith(`${name}\u0000`)) this.snapshots.delete(key);
    this.pendingFleet.delete(name);
    const event: PanelEvent = { kind: "host-removed", host: name };
    this.fleetEvent(event);
    const item = { id: `${name}~-0`, data: preserialized(event) };
    this.send(this.hostSubs.get(name), item);
    this.forUnitsOf(name, (_unit, subs) => this.send(subs, item));
  }

  // --- browser streams ---------------------------------------------------------------------

  /**
   * A viewer, pushed to: `deliver` gets the snapshot or the events it missed at once (before
   * this returns: nothing can fall between them), then every live event of its scope, by
   * reference (one serialization shared by every viewer). `resync()` after the viewer fell
   * behind: its fresh snapshot, from which live events go on. `close()` when it leaves.
   */
  subscribe(scope: WatchScope, lastEventId: string | null, deliver: (item: StreamItem) => void): { resync(): StreamItem; close(): void } {
    const sub: Subscriber = { scope, deliver, skipThrough: null };
    const set = this.setFor(scope, true)!;
    set.add(sub);
    for (const item of this.initial(sub, lastEventId)) deliver(item);
    let closed = false;
    return {
      resync: () => {
        sub.skipThrough = null;
        return this.snapshotFor(scope);
      },
      close: () => {
        if (closed) return;
        closed = true;
        set.delete(sub);
        this.dropEmpty(scope);
      },
    };
  }

  /** A viewer's stream: a snapshot or the events it missed, then live events, until `signal` aborts; bounded queue, a fresh snapshot when it overflows. */
  async *watch(scope: WatchScope, lastEventId: string | null, signal: AbortSignal): AsyncGenerator<StreamItem> {
    const queue = new BoundedQueue<StreamItem>(this.queueLimit);
    // registration and the first items happen in one tick: nothing can fall between them
    // what subscribe() delivers at once (a replay may be longer than the queue's bound) is yielded first
    let first: StreamItem[] | null = [];
    const sub = this.subscribe(scope, lastEventId, (item) => (first ? first.push(item) : queue.push(item)));
    const initial = first;
    first = null;
    try {
      for (const item of initial) yield item;
      for (;;) {
        try {
          for await (const item of queue.drain(signal)) yield item;
          return;
        } catch (err) {
          if (!(err instanceof StreamOverflow)) throw err;
          queue.recover();
          yield sub.resync();
        }
      }
    } finally {
      sub.close();
    }
  }

  private initial(sub: Subscriber, lastEventId: string | null): StreamItem[] {
    const { scope } = sub;
    if (scope.watch === "fleet") {
      const m = lastEventId ? /^fleet~([0-9a-f]+)-(\d+)$/.exec(lastEventId) : null;
      if (m && m[1] === this.bootId) {
        const seq = Number(m[2]);
        const first = this.fleetRing[0];
        if (seq === this.fleetSeq) return [];
        if (seq < this.fleetSeq && first && fleetSeqOf(first.id) <= seq + 1) return this.fleetRing.filter((i) => fleetSeqOf(i.id) > seq);
      }
      return [this.snapshotFor(scope)];
    }
    const link = this.links.get(scope.host);
    const pos = lastEventId ? parseHostEventId(lastEventId) : null;
    if (link && pos && pos.host === scope.host) {
      const replay = link.replayAfter(pos.bootId, pos.seq);
      if (replay !== null) {
        sub.skipThrough = { bootId: pos.bootId, seq: pos.seq };
        const unit = scope.watch === "unit" ? scope.name : null;
        const items = replay.filter((e) => unit === null || e.unit === null || e.unit === unit).map((e) => ({ id: e.id, data: preserialized(e.event) }));
        // what changed meanwhile without an event to replay: the latest GPU sample, the host's state
        if (link.gpu) items.push({ id: link.currentId(), data: preserialized<PanelEvent>({ kind: "gpu", host: link.name, sample: link.gpu }) });
        items.push({ id: link.currentId(), data: preserialized<PanelEvent>({ kind: "hosts", hosts: [link.summary()] }) });
        return items;
      }
    }
    return [this.snapshotFor(scope)];
  }

  private snapshotFor(scope: WatchScope): StreamItem {
    if (scope.watch === "fleet") {
      const links = this.links.all();
      const units = links.flatMap((l) => [...l.units.values()].map((u) => ({ ...u, host: l.name })));
      return {
        id: `fleet~${this.bootId}-${this.fleetSeq}`,
        data: preserialized<PanelEvent>({ kind: "fleet-snapshot", hosts: links.map((l) => l.summary()), units, atMs: Date.now() }),
      };
    }
    const link = this.links.get(scope.host)!;
    // viewers that (re)connect at the same position share one snapshot: serialized and encoded once
    const key = scope.watch === "unit" ? `${scope.host}\u0000${scope.name}` : scope.host;
    const id = link.currentId();
    const summary = link.summary();
    const hit = this.snapshots.get(key);
    if (hit && hit.item.id === id && hit.summary === summary) return hit.item;
    const item = { id, data: preserialized<PanelEvent>(link.snapshot(scope.watch === "unit" ? scope.name : undefined)) };
    this.snapshots.set(key, { item, summary });
    return item;
  }

  private fleetEvent(e: PanelEvent): void {
    this.fleetSeq += 1;
    if (this.fleetSubs.size === 0) {
      // nobody on the overview: no serialization; a viewer resuming from before this gets a fresh snapshot
      this.fleetRing = [];
      return;
    }
    const item = { id: `fleet~${this.bootId}-${this.fleetSeq}`, data: preserialized(e) };
    this.fleetRing.push(item);
    if (this.fleetRing.length > FLEET_RING) this.fleetRing.splice(0, this.fleetRing.length - FLEET_RING);
    this.send(this.fleetSubs, item);
  }

  private send(subs: Set<Subscriber> | undefined, item: StreamItem): void {
    if (!subs) return;
    const pos = subs.size > 0 && item.id.includes("~") ? parseHostEventId(item.id) : null;
    for (const sub of subs) {
      if (sub.skipThrough && pos) {
        if (pos.bootId === sub.skipThrough.bootId && pos.seq <= sub.skipThrough.seq) continue;
        sub.skipThrough = null;
      }
      sub.deliver(item);
    }
  }

  private forUnitsOf(host: string, fn: (unit: string, subs: Set<Subscriber>) => void): void {
    for (const [unit, subs] of this.unitSubs.get(host) ?? []) fn(unit, subs);
  }

  private setFor(scope: WatchScope, create: boolean): Set<Subscriber> | undefined {
    if (scope.watch === "fleet") return this.fleetSubs;
    if (scope.watch === "host") {
      let set = this.hostSubs.get(scope.host);
      if (!set && create) this.hostSubs.set(scope.host, (set = new Set()));
      return set;
    }
    let units = this.unitSubs.get(scope.host);
    if (!units && create) this.unitSubs.set(scope.host, (units = new Map()));
    let set = units?.get(scope.name);
    if (!set && create) units!.set(scope.name, (set = new Set()));
    return set;
  }

  private dropEmpty(scope: WatchScope): void {
    if (scope.watch === "host" && this.hostSubs.get(scope.host)?.size === 0) this.hostSubs.delete(scope.host);
    if (scope.watch !== "unit") return;
    const units = this.unitSubs.get(scope.host);
    if (units?.get(scope.name)?.size === 0) units.delete(scope.name);
    if (units?.size === 0) this.unitSubs.delete(scope.host);
  }
}

function fleetSeqOf(id: string): number {
  return Number(id.slice(id.lastIndexOf("-") + 1));
}
