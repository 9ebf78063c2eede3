/**
 * How gpudeck writes numbers, times and names, the same in the UI and in diagnosis sentences.
 * Part of the contract: imports nothing else of the project. All pure.
 *
 * Two registers, with different names so neighbouring rows never disagree by accident:
 * - live displays (counters, axes, tables): `formatDuration` ("450 ms", "2 min 05 s": the
 *   smaller unit zero-padded so a ticking counter does not jitter), `formatMiB` ("75.2 GiB",
 *   null → "n/a", never 0);
 * - sentences (diagnosis headlines, evidence, settings): `formatDurationWords` ("<1 s",
 *   "2 min 5 s", "forever"), `formatMiBRounded` ("75 GiB"; one decimal only below 10 GiB).
 *
 * Times of day take an optional IANA time zone so tests (and a server render) can pin it;
 * without one the local zone is used. 24-hour clock everywhere: on-call timelines are compared
 * across people and logs, and "2:03" without AM/PM is ambiguous.
 */

// --- live displays ----------------------------------------------------------------------

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
    const refMs = opts.relativeToMs ?? Date.now();
    // no reference (a page still hydrating has no clock yet): the date, to be sure
    const ref = Number.isFinite(refMs) ? zonedParts(refMs, opts.timeZone) : null;
    showDate = !ref || ref.year !== p.year || ref.month !== p.month || ref.day !== p.day;
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

// --- sentences ----------------------------------------------------------------------------

const EN_DASH = "\u2013";

/**
 * A duration in words: "<1 s", "14 s", "1 min 30 s", "2 h 5 min", "3 d 4 h".
 * Negative durations are formatted by magnitude (callers say "ago" / "after").
 */
export function formatDurationWords(ms: number): string {
  if (!Number.isFinite(ms)) return "forever";
  const abs = Math.abs(ms);
  if (abs < 1000) return "<1 s";
  const totalSeconds = Math.round(abs / 1000);
  if (totalSeconds < 60) return `${totalSeconds} s`;
  if (totalSeconds < 3600) {
    const minutes = Math.floor(totalSeconds / 60);
    const seconds = totalSeconds % 60;
    return seconds === 0 ? `${minutes} min` : `${minutes} min ${seconds} s`;
  }
  const totalMinutes = Math.round(totalSeconds / 60);
  if (totalMinutes < 24 * 60) {
    const hours = Math.floor(totalMinutes / 60);
    const minutes = totalMinutes % 60;
    return minutes === 0 ? `${hours} h` : `${hours} h ${minutes} min`;
  }
  const totalHours = Math.round(totalMinutes / 60);
  const days = Math.floor(totalHours / 24);
  const hours = totalHours % 24;
  return hours === 0 ? `${days} d` : `${days} d ${hours} h`;
}

/** A µs duration as systemd settings show it ("1 min 30 s", "infinity"). */
export function formatUsecSetting(usec: number): string {
  if (isInfiniteUsec(usec)) return "infinity";
  return formatDurationWords(usec / 1000);
}

/**
 * systemd encodes "no limit" as 0 or UINT64_MAX (which arrives as ~1.8e19 in JS). Anything beyond
 * ~31 years is treated as infinity too, so rounding of the 64-bit value cannot matter.
 */
export function isInfiniteUsec(usec: number): boolean {
  return !Number.isFinite(usec) || usec <= 0 || usec >= 1e15;
}

function trimNumber(value: number, decimals: number): string {
  return value.toFixed(decimals).replace(/\.0+$/, "");
}

/** MiB as "512 MiB", "1.5 GiB", "598 GiB" (one decimal only below 10 GiB). */
export function formatMiBRounded(mib: number): string {
  const abs = Math.abs(mib);
  if (Math.round(abs) < 1024) return `${Math.round(mib)} MiB`;
  const gib = mib / 1024;
  return `${Math.abs(gib) < 10 ? trimNumber(gib, 1) : Math.round(gib).toString()} GiB`;
}

/** A rate in MiB/s as "350 MiB/s" or "21 GiB/s". */
export function formatRate(mibPerSecond: number): string {
  return `${formatMiBRounded(mibPerSecond)}/s`;
}

/**
 * Sorted, de-duplicated GPU indexes with runs of three or more collapsed:
 * [0..7] → "0–7", [0,2,5] → "0, 2, 5", [0,1,2,3,6] → "0–3, 6", [4,5] → "4, 5".
 */
export function formatIndexList(indexes: readonly number[]): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  let i = 0;
  while (i < sorted.length) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    if (j - i >= 2) {
      parts.push(`${sorted[i]}${EN_DASH}${sorted[j]}`);
    } else {
      for (let k = i; k <= j; k++) parts.push(String(sorted[k]));
    }
    i = j + 1;
  }
  return parts.join(", ");
}

/** A short label for a GPU whose index nvidia-smi did not report: "GPU-1a2b3c4d". */
export function shortUuid(uuid: string): string {
  const match = /^(GPU-|MIG-)?([0-9a-fA-F]{8})/.exec(uuid);
  return match ? `${match[1] ?? ""}${match[2]}` : uuid.slice(0, 12);
}

/**
 * GPUs for a sentence: "GPU 3", "GPUs 0–7", "GPUs 0, 2, GPU-1a2b3c4d".
 * Accepts readings whose index may be null (telemetry gaps).
 */
export function formatGpus(gpus: readonly { index: number | null; uuid: string }[]): string {
  const seen = new Set<string>();
  const indexes: number[] = [];
  const unnamed: string[] = [];
  for (const gpu of gpus) {
    if (seen.has(gpu.uuid)) continue;
    seen.add(gpu.uuid);
    if (gpu.index === null) unnamed.push(shortUuid(gpu.uuid));
    else indexes.push(gpu.index);
  }
  const count = indexes.length + unnamed.length;
  if (count === 0) return "no GPUs";
  const list = [indexes.length > 0 ? formatIndexList(indexes) : "", ...unnamed.sort()].filter((s) => s !== "");
  return `${count === 1 ? "GPU" : "GPUs"} ${list.join(", ")}`;
}

const SHELL_SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** argv as a shell would show it, single-quoting what needs it, cut to maxChars with "…". */
export function formatCmdline(argv: readonly string[], maxChars = 160): string {
  const text = argv.map((arg) => (arg !== "" && SHELL_SAFE.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)).join(" ");
  return truncate(text, maxChars);
}

export function truncate(text: string, maxChars: number): string {
  const oneLine = text.replace(/\s*\n\s*/g, " ⏎ ");
  return oneLine.length <= maxChars ? oneLine : `${oneLine.slice(0, Math.max(0, maxChars - 1))}…`;
}

/** Linux x86-64/arm64 signal numbers (the ones a service is realistically killed with). */
const SIGNAL_NAMES: Record<number, string> = {
  1: "SIGHUP",
  2: "SIGINT",
  3: "SIGQUIT",
  4: "SIGILL",
  5: "SIGTRAP",
  6: "SIGABRT",
  7: "SIGBUS",
  8: "SIGFPE",
  9: "SIGKILL",
  10: "SIGUSR1",
  11: "SIGSEGV",
  12: "SIGUSR2",
  13: "SIGPIPE",
  14: "SIGALRM",
  15: "SIGTERM",
  16: "SIGSTKFLT",
  17: "SIGCHLD",
  18: "SIGCONT",
  19: "SIGSTOP",
  20: "SIGTSTP",
  21: "SIGTTIN",
  22: "SIGTTOU",
  23: "SIGURG",
  24: "SIGXCPU",
  25: "SIGXFSZ",
  26: "SIGVTALRM",
  27: "SIGPROF",
  28: "SIGWINCH",
  29: "SIGIO",
  30: "SIGPWR",
  31: "SIGSYS",
};

export function signalName(signal: number): string {
  return SIGNAL_NAMES[signal] ?? `signal ${signal}`;
}

/** Parses "KILL", "SIGKILL" or "9" as journald/systemd print them. */
export function signalNumber(text: string): number | null {
  if (/^\d+$/.test(text)) return Number(text);
  const wanted = text.toUpperCase().startsWith("SIG") ? text.toUpperCase() : `SIG${text.toUpperCase()}`;
  for (const [number, name] of Object.entries(SIGNAL_NAMES)) if (name === wanted) return Number(number);
  return null;
}

/** Exit statuses worth a hint (systemd's own 2xx codes and the shell's conventions). */
const EXIT_HINTS: Record<number, string> = {
  1: "generic failure",
  2: "invalid argument / misuse",
  126: "command not executable",
  127: "command not found",
  200: "CHDIR: working directory missing",
  203: "EXEC: binary missing or not executable",
  209: "STDOUT: could not set up output",
  216: "GROUP: group does not exist",
  217: "USER: user does not exist",
  226: "NAMESPACE: sandboxing setup failed",
  233: "RUNTIME_DIRECTORY: could not create it",
  243: "CREDENTIALS: could not load credentials",
};

export function exitStatusHint(status: number): string | null {
  if (EXIT_HINTS[status]) return EXIT_HINTS[status];
  // A shell reports a child killed by signal N as 128+N.
  if (status > 128 && status < 160) return `a child was killed by ${signalName(status - 128)}`;
  return null;
}

/** CLD_* codes as systemd's ExecMainCode reports them. */
export const CLD_EXITED = 1;
export const CLD_KILLED = 2;
export const CLD_DUMPED = 3;

/** "exit code 1", "killed by SIGKILL", "dumped core (SIGSEGV)"; null when there is no exit. */
export function formatExit(code: number, status: number): string | null {
  if (code === CLD_EXITED) return `exit code ${status}`;
  if (code === CLD_KILLED) return `killed by ${signalName(status)}`;
  if (code === CLD_DUMPED) return `dumped core (${signalName(status)})`;
  return null;
}

/** "2025-05-01 03:12:09 UTC" */
export function formatTimestamp(ms: number): string {
  return `${new Date(ms)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "")} UTC`;
}

/** "03:12:09" (UTC), for log lines. */
export function formatClock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

/** "activating (start-pre)" */
export function formatState(pair: { activeState: string; subState: string }): string {
  return pair.subState && pair.subState !== pair.activeState ? `${pair.activeState} (${pair.subState})` : pair.activeState;
}

/** "1 restart", "3 restarts" */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}
