/**
 * Journal search: `journalctl` with the filters as argv elements (spawned, never a shell),
 * bounded in lines (`--lines=`, and the reader stops counting), bytes (stdout beyond the bound
 * kills it) and time (a timer SIGKILLs it). `grep` goes as `--grep=` with
 * `--case-sensitive=false` (journalctl's own rule is "case-sensitive when the pattern has an
 * upper-case letter"); a journalctl built without PCRE2 gets the pattern applied here instead.
 *
 * Kernel lines for a unit's GPUs (the timeline's "at this fault") are a second query,
 * `_TRANSPORT=kernel` with a grep for the NVIDIA driver's lines naming those PCI bus ids, merged
 * by time. Argv building is pure and exported (tested); reading is `runJournalctl`.
 */
import { spawn } from "node:child_process";
import { journalPriorityNumber, type JournalPriorityName } from "../../contract/journalSearch";
import type { JournalEntry } from "../../contract/types";
import { parseJournalLine, type JournalSource } from "./journal";

export interface JournalFilter {
  since?: number;
  until?: number;
  priority?: JournalPriorityName | number;
  grep?: string;
  boot?: number | string;
  kernelPci?: string[];
}

export interface JournalSearchQuery extends JournalFilter {
  unit: string;
  /** only lines after this one */
  cursor?: string;
  /** the newest `limit` lines that match (no limit: every line of the range, up to the bounds) */
  limit?: number;
}

export interface JournalBounds {
  /** stop after this many entries (the oldest kept are dropped when `newest`) */
  maxLines: number;
  /** stdout bytes; beyond it journalctl is killed and the answer says it was cut */
  maxBytes: number;
  timeoutMs: number;
}

export const SEARCH_BOUNDS: JournalBounds = { maxLines: 5000, maxBytes: 32 * 1024 * 1024, timeoutMs: 15_000 };
export const DOWNLOAD_BOUNDS: JournalBounds = { maxLines: 50_000, maxBytes: 64 * 1024 * 1024, timeoutMs: 30_000 };
export const HISTOGRAM_BOUNDS: JournalBounds = { maxLines: 200_000, maxBytes: 64 * 1024 * 1024, timeoutMs: 20_000 };

/** Fields journalctl writes (the rest of an entry is not read: fewer bytes). */
const FIELDS = "MESSAGE,PRIORITY,_PID,UNIT,_SYSTEMD_UNIT,JOB_RESULT";

/** `--since=@SECONDS` (journalctl's epoch form); whole seconds, widened so the ms filter here is exact. */
const sinceArg = (ms: number) => `--since=@${Math.floor(ms / 1000)}`;
const untilArg = (ms: number) => `--until=@${Math.ceil(ms / 1000)}`;

/** The filter part of the argv, shared by the unit query and the kernel one. */
function filterArgs(f: JournalFilter, opts: { grepHere: boolean }): string[] {
  const args: string[] = [];
  if (f.since !== undefined) args.push(sinceArg(f.since));
  if (f.until !== undefined) args.push(untilArg(f.until));
  if (f.priority !== undefined) {
    const p = journalPriorityNumber(f.priority);
    if (p === null) throw new Error(`priority ${String(f.priority)} is not a syslog priority (emerg … debug or 0–7)`);
    args.push(`--priority=${p}`);
  }
  if (f.grep && !opts.grepHere) args.push(`--grep=${f.grep}`, "--case-sensitive=false");
  if (f.boot !== undefined) {
    if (typeof f.boot === "number" ? !Number.isInteger(f.boot) || f.boot > 0 : !/^[0-9a-f]{32}$/.test(f.boot))
      throw new Error("boot must be 0, -1 … or a boot id");
    args.push(`--boot=${f.boot}`);
  }
  return args;
}

/** argv (without the binary) for a unit's search. */
export function journalSearchArgs(q: JournalSearchQuery & JournalSource, opts: { grepHere?: boolean } = {}): string[] {
  const args = ["--output=json", `--output-fields=${FIELDS}`, "--no-pager", "--all", "--quiet"];
  if (q.directory) args.push(`--directory=${q.directory}`);
  if (q.limit !== undefined) args.push(`--lines=${Math.max(1, Math.floor(q.limit))}`);
  if (q.cursor) args.push(`--after-cursor=${q.cursor}`);
  // journalctl takes only one of --since= and --after-cursor=: with a cursor, `since` is applied here (inRange)
  args.push(...filterArgs(q.cursor ? { ...q, since: undefined } : q, { grepHere: opts.grepHere === true }));
  args.push(`--unit=${q.unit}`);
  return args;
}

/** A PCI bus id as the NVIDIA driver writes it in Xid lines ("PCI:0000:3b:00"): the bus:device part, lower-case. */
export function pciForGrep(pci: string): string {
  const m = /(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}:[0-9a-fA-F]{2})/.exec(pci);
  return (m?.[2] ?? pci).toLowerCase();
}

/** argv for the kernel's NVIDIA lines naming `pci` (all NVRM lines when none is given). */
export function kernelSearchArgs(q: JournalFilter & JournalSource & { limit?: number }, opts: { grepHere?: boolean } = {}): string[] {
  const args = ["--output=json", `--output-fields=${FIELDS}`, "--no-pager", "--all", "--quiet"];
  if (q.directory) args.push(`--directory=${q.directory}`);
  if (q.limit !== undefined) args.push(`--lines=${Math.max(1, Math.floor(q.limit))}`);
  args.push(...filterArgs({ ...q, grep: undefined }, { grepHere: true }));
  if (!opts.grepHere) args.push(`--grep=${kernelGrep(q.kernelPci ?? [])}`, "--case-sensitive=false");
  // a field match after "--": never an option
  args.push("--", "_TRANSPORT=kernel");
  return args;
}

export function kernelGrep(pci: readonly string[]): string {
  const ids = pci.map(pciForGrep).filter((p) => /^[0-9a-f]{2}:[0-9a-f]{2}$/.test(p));
  return ids.length > 0 ? `NVRM.*(${ids.join("|")})` : "NVRM";
}

export interface JournalRead {
  entries: JournalEntry[];
  /** a bound was hit: more lines matched than were read */
  cut: boolean;
}

export class JournalTimeout extends Error {}

/**
 * Run journalctl with `args` and parse its JSON lines. `keep: "newest"` keeps the last
 * `maxLines` (a search or download: journalctl's --lines already asks for those), "oldest" stops
 * at `maxLines` (the histogram). Rejects on a timeout (JournalTimeout) or a journalctl error.
 */
export function runJournalctl(
  binary: string,
  args: string[],
  unit: string,
  bounds: JournalBounds,
  opts: { keep?: "newest" | "oldest"; onEntry?: (e: JournalEntry) => void } = {},
): Promise<JournalRead> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
    const entries: JournalEntry[] = [];
    let count = 0;
    let bytes = 0;
    let rest = "";
    let stderr = "";
    let cut = false;
    let timedOut = false;
    let stopped = false;
    const stop = () => {
      stopped = true;
      child.kill("SIGKILL");
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, bounds.timeoutMs);
    const take = (l: string) => {
      if (stopped) return;
      const e = parseJournalLine(l, unit);
      if (!e) return;
      count++;
      if (opts.keep === "oldest" && count > bounds.maxLines) {
        cut = true;
        stop();
        return;
      }
      if (opts.onEntry) opts.onEntry(e);
      else entries.push(e);
      if (entries.length > bounds.maxLines) {
        entries.shift();
        cut = true;
      }
    };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      if (stopped) return;
      bytes += Buffer.byteLength(chunk);
      if (bytes > bounds.maxBytes) {
        cut = true;
        stop();
        return;
      }
      const parts = (rest + chunk).split("\n");
      rest = parts.pop() ?? "";
      for (const l of parts) take(l);
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
      if (timedOut) {
        reject(
          new JournalTimeout(`the journal search took longer than ${Math.round(bounds.timeoutMs / 1000)} s and was stopped; narrow the time range or the text`),
        );
        return;
      }
      if (!stopped) take(rest);
      if (stopped || code === 0 || (code === 1 && stderr.trim() === "")) resolve({ entries, cut });
      else reject(new Error(`journalctl failed (${signal ?? `exit ${code}`}): ${stderr.trim() || "no output"}`));
    });
  });
}

/** journalctl without PCRE2 says so; the pattern is then applied here. */
export const NO_PCRE = /pattern matching support|Compiled without/i;

/** The ms bounds, exactly (journalctl got whole seconds). */
export function inRange(e: JournalEntry, f: JournalFilter): boolean {
  const ms = e.atUsec / 1000;
  return (f.since === undefined || ms >= f.since) && (f.until === undefined || ms <= f.until);
}

/** Merge two time-ordered lists (unit lines and kernel lines), keeping the newest `max`. */
export function mergeByTime(a: JournalEntry[], b: JournalEntry[], max: number): JournalEntry[] {
  const all = [...a, ...b].sort((x, y) => x.atUsec - y.atUsec);
  return all.length > max ? all.slice(all.length - max) : all;
}

/** One line of a download: `2026-12-03T08:12:04.123Z vllm-a.service[4128] <err>: message`. */
export function downloadLine(e: JournalEntry): string {
  const at = new Date(Math.floor(e.atUsec / 1000)).toISOString();
  const prio = e.priority <= 3 ? " <err>" : e.priority === 4 ? " <warning>" : "";
  return `${at} ${e.unit}${e.pid !== null ? `[${e.pid}]` : ""}${prio}: ${e.message.replace(/\r?\n/g, "\n    ")}`;
}

export interface SearchOptions {
  bounds: JournalBounds;
  /** each entry as it comes, instead of a list (the histogram counts without keeping lines) */
  onEntry?: (e: JournalEntry) => void;
  /** "oldest": stop at the bound (the histogram); default "newest" */
  keep?: "newest" | "oldest";
}

/** A unit's search on the real journal (and the kernel's NVIDIA lines for its GPUs when asked). */
export async function searchUnitJournal(source: JournalSource, q: JournalSearchQuery, opts: SearchOptions): Promise<JournalRead> {
  const binary = source.journalctl ?? "journalctl";
  const grepRe = q.grep ? new RegExp(q.grep, "i") : null;
  const read = async (build: (grepHere: boolean) => string[], unit: string, matches: ((e: JournalEntry) => boolean) | null): Promise<JournalRead> => {
    const wanted = (e: JournalEntry) => inRange(e, q) && (matches === null || matches(e));
    const run = (grepHere: boolean) => {
      const filter = grepHere ? wanted : (e: JournalEntry) => inRange(e, q);
      const onEntry = opts.onEntry;
      return runJournalctl(binary, build(grepHere), unit, opts.bounds, {
        keep: opts.keep,
        onEntry: onEntry ? (e) => filter(e) && onEntry(e) : undefined,
      }).then((r) => ({ ...r, entries: r.entries.filter(filter) }));
    };
    try {
      return await run(false);
    } catch (err) {
      if (!NO_PCRE.test((err as Error).message)) throw err;
      return run(true);
    }
  };
  // journalctl 252 writes `--lines` with `--grep` newest first: order by time (stable for equal stamps)
  // lines read from one stream in one go share a timestamp: then the cursor's sequence number (i=) orders them
  const seqnum = (c: string) => parseInt(/(?:^|;)i=([0-9a-f]+)/.exec(c)?.[1] ?? "0", 16);
  const byTime = (r: JournalRead): JournalRead => ({ ...r, entries: r.entries.sort((x, y) => x.atUsec - y.atUsec || seqnum(x.cursor) - seqnum(y.cursor)) });
  const unitPart = read((grepHere) => journalSearchArgs({ ...source, ...q }, { grepHere }), q.unit, grepRe ? (e) => grepRe.test(e.message) : null);
  if (!q.kernelPci) return unitPart.then(byTime);
  const kernelRe = new RegExp(kernelGrep(q.kernelPci), "i");
  const kernelPart = read(
    (grepHere) => kernelSearchArgs({ ...source, ...q, limit: q.limit }, { grepHere }),
    "kernel",
    (e) => kernelRe.test(e.message) && (grepRe === null || grepRe.test(e.message)),
  );
  const [u, k] = await Promise.all([unitPart, kernelPart]);
  const max = q.limit ?? opts.bounds.maxLines;
  return {
    entries: mergeByTime(
      u.entries,
      k.entries.map((e) => ({ ...e, unit: "kernel" })),
      max,
    ),
    cut: u.cut || k.cut || u.entries.length + k.entries.length > max,
  };
}
