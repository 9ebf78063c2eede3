/** `90s`, `20m`, `1h`, `1h30m` → ms; null when it is not one. */
export function parseDuration(text: string): number | null {
  const t = text.trim();
  if (!/^(\d+(ms|s|m|h|d))+$/.test(t)) return null;
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  let total = 0;
  for (const [, n, u] of t.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(n) * unit[u!]!;
  return total > 0 && Number.isSafeInteger(total) ? total : null;
}

/** 83000 → "1m23s" */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60 ? `${s % 60}s` : ""}`;
  return `${Math.floor(m / 60)}h${m % 60 ? `${m % 60}m` : ""}`;
}
