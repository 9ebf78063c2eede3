/**
 * Formatting for diagnosis headlines and evidence: short, unambiguous, readable at 3 a.m.
 * All pure; times are passed in, never read from the clock.
 */

const EN_DASH = "\u2013";

/**
 * A duration in words: "<1 s", "14 s", "1 min 30 s", "2 h 5 min", "3 d 4 h".
 * Negative durations are formatted by magnitude (callers say "ago" / "after").
 */
export function formatDuration(ms: number): string {
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
  return formatDuration(usec / 1000);
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
export function formatMiB(mib: number): string {
  const abs = Math.abs(mib);
  if (Math.round(abs) < 1024) return `${Math.round(mib)} MiB`;
  const gib = mib / 1024;
  return `${Math.abs(gib) < 10 ? trimNumber(gib, 1) : Math.round(gib).toString()} GiB`;
}

/** A rate in MiB/s as "350 MiB/s" or "21 GiB/s". */
export function formatRate(mibPerSecond: number): string {
  return `${formatMiB(mibPerSecond)}/s`;
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
