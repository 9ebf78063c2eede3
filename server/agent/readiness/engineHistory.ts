/**
 * Each engine's load and latency over the last 24 h (units.engineHistory), from the metrics the
 * readiness watch already scrapes: every scrape for the last hour, then one row per 30 s. The
 * 30 s rows also go to the agent's history store (agent-history.db, `persist`), so a restarted
 * agent keeps its day. Bounded: units × rows.
 * Answers are bucketed to at most `points` rows: the bucket's peak for load, KV cache and
 * latencies (a bad minute is not averaged away), the mean for tokens/s.
 */
import type { EngineHistoryRow } from "../../contract/readiness";

export interface EngineHistoryOptions {
  fullResolutionMs?: number;
  coarseStepMs?: number;
  keepMs?: number;
  maxUnits?: number;
  /** called with each row kept past the last hour (one per coarseStepMs): the history store's write */
  persist?: (unit: string, row: EngineHistoryRow) => void;
}

export const ENGINE_HISTORY_MAX_POINTS = 4000;

export class EngineHistory {
  private readonly units = new Map<string, { fine: EngineHistoryRow[]; coarse: EngineHistoryRow[] }>();
  private readonly fullResolutionMs: number;
  private readonly coarseStepMs: number;
  private readonly keepMs: number;
  private readonly maxUnits: number;
  private readonly persist: ((unit: string, row: EngineHistoryRow) => void) | undefined;
  private readonly persistedAt = new Map<string, number>();

  constructor(opts: EngineHistoryOptions = {}) {
    this.fullResolutionMs = opts.fullResolutionMs ?? 3600_000;
    this.coarseStepMs = opts.coarseStepMs ?? 30_000;
    this.keepMs = opts.keepMs ?? 24 * 3600_000;
    this.maxUnits = opts.maxUnits ?? 1000;
    this.persist = opts.persist;
  }

  /** Rows from an earlier run (the history store), oldest first; before the first push. */
  restore(rows: Map<string, EngineHistoryRow[]>, nowMs = Date.now()): void {
    for (const [unit, list] of rows) {
      if (!this.units.has(unit) && this.units.size >= this.maxUnits) continue;
      const keep = list.filter((r) => r.atMs >= nowMs - this.keepMs).sort((a, b) => a.atMs - b.atMs);
      if (keep.length === 0) continue;
      this.units.set(unit, { coarse: keep, fine: [] });
      this.persistedAt.set(unit, keep.at(-1)!.atMs);
    }
  }

  push(unit: string, row: EngineHistoryRow): void {
    let h = this.units.get(unit);
    if (!h) {
      if (this.units.size >= this.maxUnits) this.units.delete(this.units.keys().next().value!);
      this.units.set(unit, (h = { fine: [], coarse: [] }));
    }
    const last = h.fine.at(-1);
    if (last && row.atMs <= last.atMs) return;
    h.fine.push(row);
    if (this.persist && row.atMs - (this.persistedAt.get(unit) ?? -Infinity) >= this.coarseStepMs) {
      this.persistedAt.set(unit, row.atMs);
      this.persist(unit, row);
    }
    let drop = 0;
    while (drop < h.fine.length && h.fine[drop]!.atMs < row.atMs - this.fullResolutionMs) {
      const old = h.fine[drop]!;
      const lastCoarse = h.coarse.at(-1);
      if (!lastCoarse || old.atMs - lastCoarse.atMs >= this.coarseStepMs) h.coarse.push(old);
      drop++;
    }
    if (drop) h.fine.splice(0, drop);
    let dropCoarse = 0;
    while (dropCoarse < h.coarse.length && h.coarse[dropCoarse]!.atMs < row.atMs - this.keepMs) dropCoarse++;
    if (dropCoarse) h.coarse.splice(0, dropCoarse);
  }

  /** At most `points` rows at or after sinceMs, oldest first. */
  query(unit: string, sinceMs: number, points: number): EngineHistoryRow[] {
    const h = this.units.get(unit);
    if (!h) return [];
    const rows = [...h.coarse, ...h.fine].filter((r) => r.atMs >= sinceMs);
    return bucketEngineRows(rows, Math.max(1, Math.min(ENGINE_HISTORY_MAX_POINTS, Math.floor(points))));
  }
}

type NumKey = Exclude<keyof EngineHistoryRow, "atMs">;
const PEAK_KEYS: NumKey[] = ["running", "waiting", "kvCacheUsage", "ttftP50Ms", "ttftP95Ms", "itlP50Ms", "itlP95Ms"];

export function bucketEngineRows(rows: readonly EngineHistoryRow[], points: number): EngineHistoryRow[] {
  if (rows.length <= points) return [...rows];
  const from = rows[0]!.atMs;
  const bucketMs = (rows.at(-1)!.atMs - from + 1) / points;
  const out: EngineHistoryRow[] = [];
  let cur: EngineHistoryRow | null = null;
  let curBucket = -1;
  let tpsSum = 0;
  let tpsN = 0;
  const close = () => {
    if (!cur) return;
    cur.tokensPerSecond = tpsN > 0 ? tpsSum / tpsN : null;
    out.push(cur);
  };
  for (const r of rows) {
    const b = Math.min(points - 1, Math.floor((r.atMs - from) / bucketMs));
    if (b !== curBucket) {
      close();
      cur = { ...r };
      curBucket = b;
      tpsSum = 0;
      tpsN = 0;
    } else {
      cur!.atMs = r.atMs;
      for (const k of PEAK_KEYS) {
        const v = r[k];
        if (v != null) cur![k] = cur![k] == null ? v : Math.max(cur![k]!, v);
      }
    }
    if (r.tokensPerSecond != null) {
      tpsSum += r.tokensPerSecond;
      tpsN++;
    }
  }
  close();
  return out;
}
