/**
 * Just enough of the Prometheus text exposition format (version 0.0.4) to read a few series:
 * `name{label="value",…} value [timestamp]`, comments and blank lines skipped, label values
 * with escaped quotes, NaN and ±Inf. Only the wanted names are kept, every label set's value in
 * a list (the caller sums or takes the largest). prom-client writes this format but cannot read it,
 * and no parser is among the dependencies: this one is small and tested on the engines' output.
 */

export type SeriesValues = Map<string, number[]>;

export function parsePrometheusText(text: string, wanted: ReadonlySet<string>): SeriesValues {
  const out: SeriesValues = new Map();
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end);
    start = end + 1;
    if (line.length === 0 || line[0] === "#") continue;
    const parsed = parseSample(line);
    if (!parsed || !wanted.has(parsed.name)) continue;
    let list = out.get(parsed.name);
    if (!list) out.set(parsed.name, (list = []));
    list.push(parsed.value);
  }
  return out;
}

function parseSample(line: string): { name: string; value: number } | null {
  const trimmed = line.trim();
  let i = 0;
  while (i < trimmed.length && /[A-Za-z0-9_:]/.test(trimmed[i]!)) i++;
  if (i === 0) return null;
  const name = trimmed.slice(0, i);
  if (trimmed[i] === "{") {
    // skip the label set, minding quoted values with escapes
    let quoted = false;
    for (i++; i < trimmed.length; i++) {
      const ch = trimmed[i];
      if (quoted) {
        if (ch === "\\") i++;
        else if (ch === '"') quoted = false;
      } else if (ch === '"') quoted = true;
      else if (ch === "}") break;
    }
    if (trimmed[i] !== "}") return null;
    i++;
  }
  const fields = trimmed.slice(i).trim().split(/\s+/);
  const value = numberOf(fields[0]);
  return value === null ? null : { name, value };
}

function numberOf(text: string | undefined): number | null {
  if (text === undefined || text === "") return null;
  if (text === "NaN") return NaN;
  if (text === "+Inf" || text === "Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  const n = Number(text);
  return Number.isNaN(n) ? null : n;
}
