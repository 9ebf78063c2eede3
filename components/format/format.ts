/**
 * Text formatting shared by the timeline, the GPU chart and the pages: durations, clock
 * times, systemd's microsecond timestamps and memory sizes.
 *
 * Every function takes an optional IANA time zone so tests (and a server render) can pin it;
 * without one the browser's local zone is used. 24-hour clock everywhere: on-call timelines
 * are compared across people and logs, and "2:03" without AM/PM is ambiguous.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const pad2 = (n: number) => String(n).padStart(2, "0");

/**
 * A duration for people: "450 ms", "34 s", "2 min 05 s", "1 h 02 min", "3 d 4 h".
 * Two units at most, the smaller zero-padded so live counters do not jitter in width.
 * Negative input (clock skew between agent and browser) is shown as 0.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  const v = Math.max(0, ms);
  if (v < SECOND) return `${Math.floor(v)} ms`;
  if (v < MINUTE) {
    // One decimal under 10 s: start-pre steps of 1.4 s vs 1.9 s matter; above it, noise.
    return v < 10 * SECOND ? `${(Math.floor(v / 100) / 10).toFixed(1)} s` : `${Math.floor(v / SECOND)} s`;
  }
  if (v < HOUR) {
    const m = Math.floor(v / MINUTE);
    const s = Math.floor((v % MINUTE) / SECOND);
    return `${m} min ${pad2(s)} s`;
  }
  if (v < DAY) {
    const h = Math.floor(v / HOUR);
    const m = Math.floor((v % HOUR) / MINUTE);
    return `${h} h ${pad2(m)} min`;
  }
  const d = Math.floor(v / DAY);
  const h = Math.floor((v % DAY) / HOUR);
  return `${d} d ${h} h`;
}

/** Compact duration for tight spaces (axis, narrow segments): "450ms", "34s", "2m05s", "1h02m", "3d4h". */
export function formatDurationShort(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  const v = Math.max(0, ms);
  if (v < SECOND) return `${Math.floor(v)}ms`;
  if (v < MINUTE) return `${Math.floor(v / SECOND)}s`;
  if (v < HOUR) return `${Math.floor(v / MINUTE)}m${pad2(Math.floor((v % MINUTE) / SECOND))}s`;
  if (v < DAY) return `${Math.floor(v / HOUR)}h${pad2(Math.floor((v % HOUR) / MINUTE))}m`;
  return `${Math.floor(v / DAY)}d${Math.floor((v % DAY) / HOUR)}h`;
}

interface ZonedParts {
  year: string;
  month: string;
  day: string;
  hour: string;
  minute: string;
  second: string;
  weekday: string;
  monthShort: string;
  zoneName: string;
}

// Intl.DateTimeFormat construction is slow (~50 µs); axis labels format hundreds of times.
const partsFormatters = new Map<string, Intl.DateTimeFormat>();
const shortMonthFormatters = new Map<string, Intl.DateTimeFormat>();

function partsFormatter(timeZone: string | undefined): Intl.DateTimeFormat {
  const key = timeZone ?? "";
  let f = partsFormatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat("en-GB", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      weekday: "short",
      hourCycle: "h23",
      timeZoneName: "short",
    });
    partsFormatters.set(key, f);
  }
  return f;
}

function zonedParts(ms: number, timeZone: string | undefined): ZonedParts {
  const out: Record<string, string> = {};
  for (const p of partsFormatter(timeZone).formatToParts(new Date(ms))) out[p.type] = p.value;
  const key = timeZone ?? "";
  let mf = shortMonthFormatters.get(key);
  if (!mf) {
    mf = new Intl.DateTimeFormat("en-GB", { timeZone, month: "short" });
    shortMonthFormatters.set(key, mf);
  }
  return {
    year: out.year ?? "",
    month: out.month ?? "",
    day: out.day ?? "",
    hour: out.hour === "24" ? "00" : (out.hour ?? ""),
    minute: out.minute ?? "",
    second: out.second ?? "",
    weekday: out.weekday ?? "",
    monthShort: mf.format(new Date(ms)),
    zoneName: out.timeZoneName ?? "",
  };
}

export interface FormatTimeOptions {
  /** include seconds (default true) */
  seconds?: boolean;
  /** include milliseconds (implies seconds) */
  millis?: boolean;
  /** prefix the date: "always", "never" (default), or "auto" = only when not the same local day as `relativeToMs` */
  date?: "always" | "never" | "auto";
  relativeToMs?: number;
  /** IANA zone; default: the runtime's local zone */
  timeZone?: string;
}

/** A wall-clock time: "14:03:27", "14:03", "14:03:27.123", "12 Jan 14:03:27". */
export function formatTime(ms: number, opts: FormatTimeOptions = {}): string {
  if (!Number.isFinite(ms)) return "—";
  const p = zonedParts(ms, opts.timeZone);
  const withSeconds = opts.seconds !== false || opts.millis === true;
  let t = `${p.hour}:${p.minute}`;
  if (withSeconds) t += `:${p.second}`;
  if (opts.millis) t += `.${String(((Math.floor(ms) % 1000) + 1000) % 1000).padStart(3, "0")}`;
  const date = opts.date ?? "never";
  let showDate = date === "always";
  if (date === "auto") {
    const ref = zonedParts(opts.relativeToMs ?? Date.now(), opts.timeZone);
    showDate = ref.year !== p.year || ref.month !== p.month || ref.day !== p.day;
  }
  return showDate ? `${Number(p.day)} ${p.monthShort} ${t}` : t;
}

/** "12 Jan" — a local calendar day, for axis ticks at midnight. */
export function formatDay(ms: number, timeZone?: string): string {
  const p = zonedParts(ms, timeZone);
  return `${Number(p.day)} ${p.monthShort}`;
}

/**
 * systemd's own timestamp, exact to the microsecond, the way `systemctl show` writes dates
 * plus the fraction: "Sun 2025-01-12 14:03:27.123456 CET". `usec` is µs since the epoch.
 * Returns "n/a" for 0 (systemd's "never").
 */
export function formatSystemdTimestamp(usec: number, timeZone?: string): string {
  if (!Number.isFinite(usec) || usec <= 0) return "n/a";
  // Split before dividing: µs since the epoch is ~1.7e15, still exact in a double, but
  // usec / 1000 would not be an integer; keep the fraction from the integer remainder.
  const wholeMs = Math.floor(usec / 1000);
  const fracUsec = usec - Math.floor(usec / 1e6) * 1e6;
  const p = zonedParts(wholeMs, timeZone);
  const frac = String(Math.floor(fracUsec)).padStart(6, "0");
  return `${p.weekday} ${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}.${frac} ${p.zoneName}`;
}

const MiB_PER_GiB = 1024;

/** Memory in MiB as people read it: "512 MiB", "1.5 GiB", "75.2 GiB", "140 GiB"; null → "n/a" (never 0). */
export function formatMiB(mib: number | null | undefined): string {
  if (mib == null || !Number.isFinite(mib)) return "n/a";
  if (Math.abs(mib) < MiB_PER_GiB) return `${Math.round(mib)} MiB`;
  return `${formatGiBNumber(mib)} GiB`;
}

/** The number of GiB with sensible precision: one decimal under 100 GiB, none above. */
export function formatGiBNumber(mib: number): string {
  const gib = mib / MiB_PER_GiB;
  return Math.abs(gib) >= 100 ? String(Math.round(gib)) : (Math.round(gib * 10) / 10).toFixed(1);
}

/** "75.2 / 140 GiB"; total unknown → "75.2 GiB / total n/a"; used unknown → "n/a / 140 GiB". */
export function formatUsedOfTotal(usedMiB: number | null, totalMiB: number | null): string {
  if (usedMiB == null && totalMiB == null) return "memory not reported";
  if (totalMiB == null) return `${formatMiB(usedMiB)} / total n/a`;
  if (usedMiB == null) return `n/a / ${formatGiBNumber(totalMiB)} GiB`;
  return `${formatGiBNumber(usedMiB)} / ${formatGiBNumber(totalMiB)} GiB`;
}
