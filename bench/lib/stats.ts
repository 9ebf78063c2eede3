/** Percentiles and formatting shared by the bench scripts. */

/** Nearest-rank percentile (p in 0..100) of an unsorted list; null when empty. */
export function percentile(xs: readonly number[], p: number): number | null {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function median(xs: readonly number[]): number | null {
  return percentile(xs, 50);
}

export interface Summary {
  n: number;
  p50: number | null;
  p95: number | null;
  max: number | null;
}

export function summarize(xs: readonly number[]): Summary {
  // a loop, not Math.max(...xs): a run with millions of deliveries overflows the call stack
  let max: number | null = null;
  for (const x of xs) if (max === null || x > max) max = x;
  return { n: xs.length, p50: percentile(xs, 50), p95: percentile(xs, 95), max };
}

/** "12.3 ms" (under 10 ms with two decimals), "1.52 s" from 1 s on, "–" for null. */
export function ms(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "–";
  if (Math.abs(v) >= 1000) return `${(v / 1000).toFixed(2)} s`;
  if (Math.abs(v) < 10) return `${v.toFixed(2)} ms`;
  return `${v.toFixed(1)} ms`;
}

export function mib(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return "–";
  return `${(bytes / 2 ** 20).toFixed(0)} MB`;
}

export function pct(part: number, whole: number): string {
  return whole > 0 ? `${((100 * part) / whole).toFixed(1)} %` : "–";
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A clock in milliseconds on the same scale as Date.now(), with sub-millisecond resolution. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}
