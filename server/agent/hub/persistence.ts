/**
 * The hub's link to the history store (agent-history.db): restore at start, write as things
 * happen, one GPU sample per step, "last alive" every 5 s and hourly pruning on its own timer
 * (so a host whose telemetry is broken still prunes). A damaged or full store costs history,
 * never the agent: failures are logged once (then at most a line a minute) and counted in
 * `state()`, which /healthz reports.
 */
import type { ActionRecord } from "../../contract/events";
import type { GpuSample, ObservationGap, UnitTransition } from "../../contract/types";
import type { HistoryStore } from "../historyStore";
import { quietLog, type QuietLog } from "../quietLog";
import { compactSample } from "../sampleHistory";

export interface RestoreTargets {
  transitionsPerUnit: number;
  actionsKept: number;
  transitions(history: Map<string, UnitTransition[]>): void;
  actions(actions: ActionRecord[]): void;
  samples(samples: GpuSample[]): void;
}

export class HistoryPersistence {
  private readonly quiet: QuietLog;
  private failing = false;
  private lastStoredSampleMs = 0;
  private lastPruneMs = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  /** spans between earlier runs of the agent (from the store), oldest first */
  private unobserved: ObservationGap[] = [];

  constructor(
    private readonly store: HistoryStore | null,
    private readonly log: (message: string) => void,
    /** one GPU sample is written per this many ms */
    private readonly sampleStepMs = 10_000,
  ) {
    this.quiet = quietLog(log);
  }

  /** "disk" (kept across restarts), "memory" (no store), "failing" (writes fail). */
  state(): "disk" | "memory" | "failing" {
    return !this.store ? "memory" : this.failing ? "failing" : "disk";
  }

  gaps(): ObservationGap[] {
    return this.unobserved;
  }

  /** Load what earlier runs kept and begin this run's record. */
  restore(bootId: string, into: RestoreTargets, nowMs = Date.now()): void {
    const store = this.store;
    if (!store) return;
    try {
      store.prune(nowMs);
      this.lastPruneMs = nowMs;
      const transitions = store.loadTransitions(into.transitionsPerUnit);
      into.transitions(transitions);
      const actions = store.loadActions(nowMs - store.retention.eventsMs, into.actionsKept);
      into.actions(actions);
      store.beginRun(bootId, nowMs);
      this.unobserved = store.loadGaps();
      // "last known alive" for the next run's gap (a crash makes it early by at most this period)
      this.timer = setInterval(() => this.housekeep(bootId, Date.now()), 5_000);
      this.timer.unref?.();
      const samples = store.loadSamples(nowMs - store.retention.samplesMs);
      into.samples(samples);
      const n = [...transitions.values()].reduce((sum, l) => sum + l.length, 0);
      this.log(`history: restored ${n} transitions of ${transitions.size} units, ${actions.length} actions, ${samples.length} GPU samples from ${store.file}`);
    } catch (err) {
      this.log(`history: could not restore from ${store.file}: ${(err as Error).message}; starting with an empty timeline`);
    }
  }

  write(write: (store: HistoryStore) => void): void {
    if (!this.store) return;
    try {
      write(this.store);
      this.failing = false;
      this.quiet.recovered("history: writing to the store works again");
    } catch (err) {
      this.failing = true;
      this.quiet.repeat(
        "write",
        `history: cannot write to ${this.store.file} (${(err as Error).message}); history is kept in memory only until it works again`,
      );
    }
  }

  sample(sample: GpuSample): void {
    if (!this.store || sample.atMs - this.lastStoredSampleMs < this.sampleStepMs) return;
    this.lastStoredSampleMs = sample.atMs;
    this.write((store) => store.addSample(compactSample(sample)));
  }

  close(bootId: string): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.write((store) => store.touchRun(bootId, Date.now()));
  }

  private housekeep(bootId: string, nowMs: number): void {
    this.write((store) => store.touchRun(bootId, nowMs));
    if (nowMs - this.lastPruneMs >= 3600_000) {
      this.lastPruneMs = nowMs;
      this.write((store) => void store.prune(nowMs));
    }
  }
}
