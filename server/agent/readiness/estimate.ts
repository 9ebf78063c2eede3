/**
 * "Ready in about N minutes": when a loading engine is expected to serve, from the unit's last
 * starts that reached serving (the readiness transitions the history store keeps). Stage-aware:
 * for an engine in stage S since T, the estimate is T + the median, over the last few starts that
 * passed through S, of the time from entering S to serving; a stage no recorded start went
 * through falls back to the run's start + the median whole start. No such start: no estimate.
 * Pure.
 */
import type { Readiness, ReadinessTransition } from "../../contract/readiness";

/** How many of the last starts the median is taken over. */
export const ESTIMATE_STARTS = 5;
/** Longer starts than this are not starts but something else (a unit left loading for a day). */
const MAX_START_MS = 24 * 3600_000;

/** One recorded start that reached serving. */
export interface PastStart {
  startMs: number;
  servingMs: number;
  /** when each stage was first entered */
  stages: Record<string, number>;
}

/** The last `keep` starts in the transitions (oldest first) that went from loading to serving. */
export function pastStarts(transitions: readonly ReadinessTransition[], keep = ESTIMATE_STARTS): PastStart[] {
  const out: PastStart[] = [];
  let cur: { startMs: number; stages: Record<string, number> } | null = null;
  for (const t of transitions) {
    if (t.to.state === "loading") {
      cur ??= { startMs: t.atMs, stages: {} };
      if (t.to.stage !== null && cur.stages[t.to.stage] === undefined) cur.stages[t.to.stage] = t.atMs;
      continue;
    }
    if (cur && t.to.state === "serving" && t.atMs >= cur.startMs && t.atMs - cur.startMs <= MAX_START_MS) {
      out.push({ ...cur, servingMs: t.atMs });
    }
    cur = null;
  }
  return out.slice(-keep);
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** When `r` (loading) is expected to serve, in epoch ms; undefined when unknown or not loading. */
export function estimateReadyAt(r: Pick<Readiness, "state" | "stage" | "stageSinceMs" | "sinceMs">, past: readonly PastStart[]): number | undefined {
  if (r.state !== "loading" || past.length === 0) return undefined;
  if (r.stage !== null) {
    const through = past.filter((p) => p.stages[r.stage!] !== undefined);
    const left = median(through.map((p) => p.servingMs - p.stages[r.stage!]!));
    if (left !== null) return Math.round((r.stageSinceMs ?? r.sinceMs) + left);
  }
  const whole = median(past.map((p) => p.servingMs - p.startMs));
  return whole === null ? undefined : Math.round(r.sinceMs + whole);
}
