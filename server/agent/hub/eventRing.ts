/**
 * The agent's numbered event stream: every event gets an id `<bootId>-<seq>` and is kept in a
 * bounded ring, so a client that reconnects with its last id gets exactly what it missed. An id
 * from another boot, or one already dropped from the ring, gets no replay (null): the caller
 * then starts from a snapshot, never from a wrong position. GPU samples get ids but are not kept:
 * a client that missed some needs the next one, not a minute of them (at 8 GPUs a sample is a
 * few KB; 20,000 of them would be ~100 MB), so the ring tracks from which sequence on it holds
 * every event it keeps.
 */
import type { AgentEvent, StoredEvent } from "../../contract/events";

type Listener = (e: StoredEvent) => void;

export class EventRing {
  private seq = 0;
  private ring: StoredEvent[] = [];
  /** every kept event with a sequence above this is in the ring */
  private coveredAfterSeq = 0;
  private readonly listeners = new Set<Listener>();
  private readonly internal = new Set<Listener>();

  constructor(
    readonly bootId: string,
    private readonly capacity = 20_000,
    /** events worth replaying to a client that reconnects */
    private readonly replayable: (e: AgentEvent) => boolean = (e) => e.kind !== "gpu",
  ) {}

  emit(event: AgentEvent): StoredEvent {
    this.seq += 1;
    const stored = { id: `${this.bootId}-${this.seq}`, event };
    if (this.replayable(event)) {
      this.ring.push(stored);
      if (this.ring.length > this.capacity) {
        const dropped = this.ring.splice(0, this.ring.length - this.capacity);
        this.coveredAfterSeq = seqOf(dropped.at(-1)!.id);
      }
    }
    for (const l of this.listeners) l(stored);
    return stored;
  }

  /** Events after `lastEventId`, or null when that id is from another boot or already dropped. */
  replayAfter(lastEventId: string | null | undefined): StoredEvent[] | null {
    if (!lastEventId) return null;
    const m = /^([0-9a-f]+)-(\d+)$/.exec(lastEventId);
    if (!m || m[1] !== this.bootId) return null;
    const seq = Number(m[2]);
    if (seq > this.seq || seq < this.coveredAfterSeq) return null;
    if (seq === this.seq) return [];
    return this.ring.filter((e) => seqOf(e.id) > seq);
  }

  currentEventId(): string {
    return `${this.bootId}-${this.seq}`;
  }

  /** Newest first, events that match, at most `limit` (the ring is searched, nothing stored extra). */
  findRecent(matches: (e: AgentEvent) => boolean, limit: number): AgentEvent[] {
    const out: AgentEvent[] = [];
    for (let i = this.ring.length - 1; i >= 0 && out.length < limit; i--) {
      const e = this.ring[i]!.event;
      if (matches(e)) out.push(e);
    }
    return out;
  }

  /** `internal`: a part of the agent itself, not a client's stream (not counted by subscriberCount). */
  subscribe(listener: Listener, internal = false): () => void {
    this.listeners.add(listener);
    if (internal) this.internal.add(listener);
    return () => {
      this.listeners.delete(listener);
      this.internal.delete(listener);
    };
  }

  subscriberCount(): number {
    return this.listeners.size - this.internal.size;
  }

  clearListeners(): void {
    this.listeners.clear();
    this.internal.clear();
  }
}

function seqOf(id: string): number {
  return Number(id.slice(id.lastIndexOf("-") + 1));
}
