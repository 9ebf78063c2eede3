/**
 * A host's recent agent events as the panel keeps them, for browsers that resume by event id.
 * GPU samples are not kept (a resuming browser gets the latest one; replaying a minute of 1 Hz
 * samples to every reconnecting viewer is waste), so the sequence has gaps: the ring knows from
 * which agent sequence on it holds every other event (`coveredAfterSeq`).
 */
import type { PanelEvent } from "../../contract/fleet";

export interface RingEntry {
  seq: number;
  /** the browser-facing id: <host>~<boot>-<seq> */
  id: string;
  event: PanelEvent;
  /** the unit the event is about, for unit-scope filtering (null: host-wide) */
  unit: string | null;
}

export class HostRing {
  private entries: RingEntry[] = [];
  private bootId: string | null = null;
  /** every non-GPU event with seq > this is in the ring (or was never emitted) */
  private coveredAfterSeq = Number.POSITIVE_INFINITY;

  constructor(private readonly capacity = 2_000) {}

  /** A snapshot at `seq` of boot `bootId`: what came before is no longer replayable. */
  reset(bootId: string, seq: number): void {
    this.entries = [];
    this.bootId = bootId;
    this.coveredAfterSeq = seq;
  }

  push(entry: RingEntry): void {
    this.entries.push(entry);
    if (this.entries.length > this.capacity) {
      const dropped = this.entries.splice(0, this.entries.length - this.capacity);
      this.coveredAfterSeq = dropped.at(-1)!.seq;
    }
  }

  /** Entries after `seq` of `bootId`, or null when that position cannot be replayed exactly. */
  after(bootId: string, seq: number): RingEntry[] | null {
    if (bootId !== this.bootId || seq < this.coveredAfterSeq) return null;
    return this.entries.filter((e) => e.seq > seq);
  }
}
