/**
 * The crash-loop rule: N automatic restarts within M minutes make a loop. Configured with
 * GPUDECK_CRASH_LOOP / --crash-loop as "N/M" with a unit on M: "5/10m" (the default), "3/90s",
 * "10/1h".
 */

export interface CrashLoopRule {
  restarts: number;
  windowMs: number;
  /** as written, e.g. "5/10m" */
  text: string;
}

export const DEFAULT_CRASH_LOOP_RULE: CrashLoopRule = { restarts: 5, windowMs: 10 * 60_000, text: "5/10m" };

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3600_000 };

/** "5/10m" → the rule; throws a message naming the expected form when it is not one. */
export function parseCrashLoopRule(spec: string | undefined): CrashLoopRule {
  if (spec === undefined || spec.trim() === "") return DEFAULT_CRASH_LOOP_RULE;
  const m = /^(\d{1,4})\/(\d{1,5})([smh])$/.exec(spec.trim());
  const restarts = m ? Number(m[1]) : NaN;
  const windowMs = m ? Number(m[2]) * UNIT_MS[m[3]!]! : NaN;
  if (!m || restarts < 2 || windowMs < 10_000 || windowMs > 24 * 3600_000) {
    throw new Error(`GPUDECK_CRASH_LOOP must be RESTARTS/WINDOW with 2 or more restarts in 10s…24h, e.g. "5/10m" (got "${spec}")`);
  }
  return { restarts, windowMs, text: spec.trim() };
}
