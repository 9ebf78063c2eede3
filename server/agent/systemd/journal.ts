/**
 * Per-unit journal: `journalctl -o json` spawned with an argv array (never a shell).
 *
 * The unit name travels as one argv element `--unit=NAME`, so it can never be read as a separate
 * option (and unit-name validation already forbids a leading '-'). Parsing is pure and exported.
 */
import { spawn } from "node:child_process";
import type { JournalEntry } from "../../contract/types";

/** The most lines one request may ask for (the router allows up to 2000). */
export const JOURNAL_MAX_LINES = 5000;
/** Longer messages are cut: a runaway log line must not blow up an API response. */
export const JOURNAL_MAX_MESSAGE = 16 * 1024;

export interface JournalSource {
  /** journalctl binary (default "journalctl" from PATH) */
  journalctl?: string;
  /** read journal files from this directory (`--directory=`) instead of the system journal */
  directory?: string;
}

export interface JournalQuery extends JournalSource {
  unit: string;
  lines: number;
  follow?: boolean;
  /** only entries after this cursor (`--after-cursor=`), e.g. to continue a backlog without a gap */
  afterCursor?: string;
  /** more units in the same query (one `--unit=` each): the readiness reader follows all engines at once */
  alsoUnits?: readonly string[];
}

export function clampLines(lines: number): number {
  if (!Number.isFinite(lines)) return 100;
  return Math.min(JOURNAL_MAX_LINES, Math.max(0, Math.floor(lines)));
}

/** argv for journalctl (without the binary itself). */
export function journalctlArgs(q: JournalQuery): string[] {
  const args = ["--output=json", "--no-pager", "--all", "--quiet", `--lines=${clampLines(q.lines)}`];
  if (q.directory) args.push(`--directory=${q.directory}`);
  if (q.afterCursor) args.push(`--after-cursor=${q.afterCursor}`);
  if (q.follow) args.push("--follow");
  args.push(`--unit=${q.unit}`);
  for (const u of q.alsoUnits ?? []) args.push(`--unit=${u}`);
  return args;
}

/** journalctl's JSON: a field is a string, a byte array (not valid UTF-8), null (too big) or an array of those. */
function fieldText(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (Array.isArray(v)) {
    if (v.length > 0 && v.every((x) => typeof x === "number")) return Buffer.from(v as number[]).toString("utf8");
    for (const x of v) {
      const t = fieldText(x);
      if (t !== null) return t; // the same field more than once: keep the first
    }
  }
  return null;
}

function fieldInt(v: unknown): number | null {
  const t = fieldText(v);
  if (t === null || !/^-?\d+$/.test(t.trim())) return null;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : null;
}

/** One line of `journalctl -o json`, or null when it is not a journal entry. */
export function parseJournalLine(line: string, requestedUnit: string): JournalEntry | null {
  const trimmed = line.trim();
  if (!trimmed.startsWith("{")) return null;
  let obj: Record<string, unknown>;
  try {
    obj = JSON.parse(trimmed) as Record<string, unknown>;
  } catch {
    return null;
  }
  const cursor = fieldText(obj.__CURSOR);
  const atUsec = fieldInt(obj.__REALTIME_TIMESTAMP);
  if (!cursor || atUsec === null) return null;
  let message = fieldText(obj.MESSAGE) ?? (obj.MESSAGE === null ? "[message too large or unreadable]" : "");
  if (message.length > JOURNAL_MAX_MESSAGE) message = `${message.slice(0, JOURNAL_MAX_MESSAGE)}… [cut]`;
  const priority = fieldInt(obj.PRIORITY);
  const entry: JournalEntry = {
    cursor,
    atUsec,
    // PID 1 writes about a unit with UNIT=, the unit's own processes carry _SYSTEMD_UNIT=
    unit: fieldText(obj.UNIT) ?? fieldText(obj._SYSTEMD_UNIT) ?? requestedUnit,
    priority: priority !== null && priority >= 0 && priority <= 7 ? priority : 6,
    pid: fieldInt(obj._PID),
    message,
  };
  const jobResult = fieldText(obj.JOB_RESULT);
  if (jobResult) entry.jobResult = jobResult;
  return entry;
}

/** The last `lines` entries of a unit's journal (bounded), oldest first. */
export function readJournal(q: JournalQuery & { timeoutMs?: number }): Promise<JournalEntry[]> {
  const lines = clampLines(q.lines);
  if (lines === 0) return Promise.resolve([]);
  return new Promise((resolve, reject) => {
    const child = spawn(q.journalctl ?? "journalctl", journalctlArgs({ ...q, lines, follow: false }), {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const entries: JournalEntry[] = [];
    let rest = "";
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), q.timeoutMs ?? 15_000);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop() ?? "";
      for (const l of parts) {
        const e = parseJournalLine(l, q.unit);
        if (e) entries.push(e);
      }
    });
    child.stderr.on("data", (c: Buffer) => {
      if (stderr.length < 4096) stderr += c.toString();
    });
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot run journalctl: ${err.message}`));
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      const e = parseJournalLine(rest, q.unit);
      if (e) entries.push(e);
      // 1 with nothing on stderr: no entries matched (older journalctl); anything else is an error
      if (code === 0 || (code === 1 && stderr.trim() === "")) resolve(entries.slice(-lines));
      else reject(new Error(`journalctl failed (${signal ?? `exit ${code}`}): ${stderr.trim() || "no output"}`));
    });
  });
}

/**
 * Live tail of a unit's journal until `signal` aborts. Back-pressure: when the consumer falls
 * `maxQueued` entries behind, journalctl's output is paused (it then blocks on its pipe).
 */
export async function* followJournal(q: Omit<JournalQuery, "follow"> & { signal: AbortSignal; maxQueued?: number }): AsyncGenerator<JournalEntry> {
  if (q.signal.aborted) return;
  const maxQueued = q.maxQueued ?? 1000;
  const child = spawn(q.journalctl ?? "journalctl", journalctlArgs({ ...q, lines: clampLines(q.lines), follow: true }), {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const queue: JournalEntry[] = [];
  let rest = "";
  let stderr = "";
  let ended = false;
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    const parts = (rest + chunk).split("\n");
    rest = parts.pop() ?? "";
    for (const l of parts) {
      const e = parseJournalLine(l, q.unit);
      if (e) queue.push(e);
    }
    if (queue.length >= maxQueued) child.stdout.pause();
    poke();
  });
  child.stderr.on("data", (c: Buffer) => {
    if (stderr.length < 4096) stderr += c.toString();
  });
  child.once("error", (err) => {
    failure = new Error(`cannot run journalctl: ${err.message}`);
    ended = true;
    poke();
  });
  child.once("close", (code, sig) => {
    ended = true;
    if (!q.signal.aborted && code !== 0 && sig === null) {
      failure = new Error(`journalctl --follow ended (exit ${code}): ${stderr.trim() || "no output"}`);
    }
    poke();
  });
  const onAbort = () => {
    child.kill("SIGTERM");
    poke();
  };
  q.signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      while (queue.length > 0 && !q.signal.aborted) {
        yield queue.shift()!;
        if (queue.length < maxQueued / 2 && child.stdout.isPaused()) child.stdout.resume();
      }
      if (q.signal.aborted) return;
      if (ended) {
        if (failure) throw failure;
        return;
      }
      await new Promise<void>((r) => (wake = r));
    }
  } finally {
    q.signal.removeEventListener("abort", onAbort);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  }
}

/**
 * What systemd logged as the result of job `jobId` for `unit` (JOB_RESULT of PID 1's "Started…" /
 * "Failed to start…" entry), or null. Used when the JobRemoved signal was missed (bus gap).
 */
export async function findJobResult(q: JournalSource & { unit: string; jobId: number; timeoutMs?: number }): Promise<string | null> {
  if (!Number.isSafeInteger(q.jobId) || q.jobId <= 0) return null;
  const args = ["--output=json", "--no-pager", "--all", "--quiet", "--lines=5"];
  if (q.directory) args.push(`--directory=${q.directory}`);
  // field matches after "--": never options, whatever they contain
  args.push("--", "_PID=1", `UNIT=${q.unit}`, `JOB_ID=${q.jobId}`);
  const entries = await new Promise<JournalEntry[]>((resolve) => {
    const child = spawn(q.journalctl ?? "journalctl", args, { stdio: ["ignore", "pipe", "ignore"] });
    let out = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), q.timeoutMs ?? 5000);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (c: string) => {
      if (out.length < 1_000_000) out += c;
    });
    child.once("error", () => {
      clearTimeout(timer);
      resolve([]);
    });
    child.once("close", () => {
      clearTimeout(timer);
      resolve(
        out
          .split("\n")
          .map((l) => parseJournalLine(l, q.unit))
          .filter((e): e is JournalEntry => e !== null),
      );
    });
  });
  return entries.reverse().find((e) => e.jobResult)?.jobResult ?? null;
}
