/**
 * Readiness transitions (state or stage changes) per unit, for the timeline's readiness lane:
 * bounded in memory, written to the history store as they happen and restored from it at start.
 * A store that fails costs history, never readiness: failures are logged quietly.
 */
import type { EngineHistoryRow, ReadinessTransition } from "../../contract/readiness";
import { quietLog, type QuietLog } from "../quietLog";

export interface ReadinessStore {
  readonly file: string;
  addReadinessTransition(t: ReadinessTransition): void;
  loadReadinessTransitions(perUnit: number): Map<string, ReadinessTransition[]>;
  /** the engines' load and latency (./engineHistory.ts), one row per unit every ~30 s */
  addEngineRow?(unit: string, row: EngineHistoryRow): void;
  loadEngineRows?(sinceMs: number): Map<string, EngineHistoryRow[]>;
}

export class ReadinessTimeline {
  private readonly byUnit = new Map<string, ReadinessTransition[]>();
  private readonly quiet: QuietLog;

  constructor(
    private readonly store: ReadinessStore | null,
    log: (msg: string) => void,
    private readonly perUnit = 2000,
  ) {
    this.quiet = quietLog(log);
  }

  restore(): void {
    if (!this.store) return;
    try {
      for (const [unit, list] of this.store.loadReadinessTransitions(this.perUnit)) this.byUnit.set(unit, list);
    } catch (err) {
      this.quiet.repeat("restore", `readiness: could not restore its history from ${this.store.file}: ${(err as Error).message}`);
    }
  }

  last(unit: string): ReadinessTransition | null {
    return this.byUnit.get(unit)?.at(-1) ?? null;
  }

  add(t: ReadinessTransition): void {
    let list = this.byUnit.get(t.unit);
    if (!list) this.byUnit.set(t.unit, (list = []));
    const last = list.at(-1);
    const at = last && t.atMs < last.atMs ? { ...t, atMs: last.atMs } : t; // kept sorted
    list.push(at);
    if (list.length > this.perUnit) list.splice(0, list.length - this.perUnit);
    if (!this.store) return;
    try {
      this.store.addReadinessTransition(at);
      this.quiet.recovered("readiness: writing its history works again");
    } catch (err) {
      this.quiet.repeat("write", `readiness: cannot write its history to ${this.store.file}: ${(err as Error).message}`);
    }
  }

  /** Transitions at or after `sinceMs`, with the one in force then first (so the lane's first segment can be drawn). */
  since(unit: string, sinceMs = 0): ReadinessTransition[] {
    const all = this.byUnit.get(unit) ?? [];
    const after = all.filter((t) => t.atMs >= sinceMs);
    const before = all.filter((t) => t.atMs < sinceMs).at(-1);
    return before ? [before, ...after] : after;
  }
}
