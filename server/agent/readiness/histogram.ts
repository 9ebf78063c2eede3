/**
 * Quantiles of a Prometheus histogram between two scrapes (`<name>_bucket{le="…"}` cumulative
 * counts, summed over label sets), the way PromQL's histogram_quantile reads a rate: linear
 * within the bucket that holds the rank; a rank in the +Inf bucket answers the highest finite
 * bound. No observation between the scrapes, or a counter reset: no quantile (null).
 */

/** le → cumulative count, per histogram name. */
export type HistogramBuckets = Map<string, Map<number, number>>;

const LE_RE = /[{,]\s*le="([^"]+)"/;

export function parseHistogramBuckets(text: string, names: readonly string[]): HistogramBuckets {
  const out: HistogramBuckets = new Map();
  if (names.length === 0) return out;
  const prefixes = names.map((n) => [`${n}_bucket{`, n] as const);
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end);
    start = end + 1;
    if (line.length === 0 || line[0] === "#") continue;
    const hit = prefixes.find(([p]) => line.startsWith(p));
    if (!hit) continue;
    const close = line.lastIndexOf("}");
    const m = LE_RE.exec(line.slice(0, close + 1));
    if (!m || close < 0) continue;
    const le = m[1] === "+Inf" || m[1] === "Inf" ? Infinity : Number(m[1]);
    const value = Number(
      line
        .slice(close + 1)
        .trim()
        .split(/\s+/)[0],
    );
    if (Number.isNaN(le) || !Number.isFinite(value)) continue;
    let buckets = out.get(hit[1]);
    if (!buckets) out.set(hit[1], (buckets = new Map()));
    buckets.set(le, (buckets.get(le) ?? 0) + value);
  }
  return out;
}

/** The q-quantile (0..1) of the observations between `previous` and `current`, or null. */
export function quantileBetween(previous: Map<number, number> | undefined, current: Map<number, number> | undefined, q: number): number | null {
  if (!previous || !current) return null;
  const les = [...current.keys()].sort((a, b) => a - b);
  if (les.length === 0 || les.at(-1) !== Infinity) return null;
  const deltas: number[] = [];
  for (const le of les) {
    const d = current.get(le)! - (previous.get(le) ?? 0);
    if (d < 0) return null; // reset
    deltas.push(d);
  }
  const total = deltas.at(-1)!;
  if (total <= 0) return null;
  const rank = q * total;
  for (let i = 0; i < les.length; i++) {
    if (deltas[i]! < rank) continue;
    const upper = les[i]!;
    const lower = i === 0 ? 0 : les[i - 1]!;
    if (upper === Infinity) return Number.isFinite(lower) ? lower : null;
    const below = i === 0 ? 0 : deltas[i - 1]!;
    const inBucket = deltas[i]! - below;
    return inBucket > 0 ? lower + ((upper - lower) * (rank - below)) / inBucket : upper;
  }
  return null;
}
