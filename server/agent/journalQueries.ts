/**
 * `units.journal` with filters, `units.journalHistogram` and `units.downloadJournal` over the
 * adapter's searchJournal (real journalctl or the simulator): the input's names mapped to the
 * query, the bounds of each kind of read, and the answer's shape. Reads go through the host's
 * JournalReads (./journalReads.ts) like every other journal read.
 */
import { TRPCError } from "@trpc/server";
import {
  JOURNAL_DOWNLOAD_MAX_LINES,
  JOURNAL_HISTOGRAM_MAX_BUCKETS,
  type JournalDownload,
  type JournalHistogram,
  type JournalRangeInput,
  type JournalSearchInput,
} from "../contract/journalSearch";
import type { JournalEntry } from "../contract/types";
import type { SystemdAdapter } from "./adapter";
import { DOWNLOAD_BOUNDS, downloadLine, HISTOGRAM_BOUNDS, JournalTimeout, SEARCH_BOUNDS, type JournalSearchQuery } from "./systemd/journalSearch";

export const DEFAULT_JOURNAL_LINES = 200;
/** A download's text is cut here too (long lines): the answer says so. */
export const DOWNLOAD_MAX_TEXT = 16 * 1024 * 1024;
/** A range without `since` is the last hour. */
const DEFAULT_RANGE_MS = 3600_000;

function query(name: string, input: Omit<JournalSearchInput, "name">): JournalSearchQuery {
  const q: JournalSearchQuery = { unit: name };
  for (const k of ["since", "until", "priority", "grep", "boot", "kernelPci", "cursor"] as const) {
    if (input[k] !== undefined) (q as unknown as Record<string, unknown>)[k] = input[k];
  }
  return q;
}

const isPlainTail = (i: JournalSearchInput) =>
  i.since === undefined &&
  i.until === undefined &&
  i.priority === undefined &&
  i.grep === undefined &&
  i.boot === undefined &&
  i.cursor === undefined &&
  i.kernelPci === undefined;

function searchOf(systemd: SystemdAdapter) {
  const search = systemd.searchJournal?.bind(systemd);
  if (!search) throw new TRPCError({ code: "NOT_IMPLEMENTED", message: "This host's agent cannot search its journal (no journal search in its adapter)." });
  return search;
}

function timeoutAsError(err: unknown): never {
  if (err instanceof JournalTimeout) throw new TRPCError({ code: "TIMEOUT", message: err.message });
  const message = (err as Error).message ?? String(err);
  // a cursor of another host, or an old one journald no longer has
  if (/seek to cursor|cursor/i.test(message))
    throw new TRPCError({ code: "BAD_REQUEST", message: `The journal cannot continue after that cursor (${message}); search again without it.` });
  if (/No journal boot entry found|boot/i.test(message))
    throw new TRPCError({ code: "BAD_REQUEST", message: `No such boot in this host's journal (${message}).` });
  throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message });
}

/** units.journal: the newest `limit` (alias `lines`) matching lines, oldest first. */
export async function searchJournal(systemd: SystemdAdapter, name: string, input: JournalSearchInput): Promise<JournalEntry[]> {
  const limit = input.limit ?? input.lines ?? DEFAULT_JOURNAL_LINES;
  if (isPlainTail(input)) return systemd.journal(name, limit);
  const r = await searchOf(systemd)({ ...query(name, input), limit }, { bounds: SEARCH_BOUNDS }).catch(timeoutAsError);
  return r.entries;
}

/** The range a histogram or download covers: `since`..`until`, the last hour by default. */
export function rangeOf(input: { since?: number; until?: number }, nowMs: number): { since: number; until: number } {
  const until = input.until ?? nowMs;
  return { since: input.since ?? until - DEFAULT_RANGE_MS, until };
}

/** Bucket width: a minute, wider when the range has more than JOURNAL_HISTOGRAM_MAX_BUCKETS minutes. */
export function bucketMsFor(rangeMs: number): number {
  const minutes = Math.max(1, Math.ceil(rangeMs / 60_000));
  return Math.ceil(minutes / JOURNAL_HISTOGRAM_MAX_BUCKETS) * 60_000;
}

/** units.journalHistogram: lines and errors (priority ≤ 3) per minute over the range. */
export async function journalHistogram(systemd: SystemdAdapter, name: string, input: JournalRangeInput, nowMs = Date.now()): Promise<JournalHistogram> {
  const { since, until } = rangeOf(input, nowMs);
  const bucketMs = bucketMsFor(until - since);
  const fromMs = Math.floor(since / 60_000) * 60_000;
  const n = Math.max(1, Math.ceil((until - fromMs + 1) / bucketMs));
  const lines = new Array<number>(n).fill(0);
  const errors = new Array<number>(n).fill(0);
  const r = await searchOf(systemd)(
    { ...query(name, { ...input, since, until }) },
    {
      bounds: HISTOGRAM_BOUNDS,
      keep: "oldest",
      onEntry: (e) => {
        const i = Math.floor((e.atUsec / 1000 - fromMs) / bucketMs);
        if (i < 0 || i >= n) return;
        lines[i]!++;
        if (e.priority <= 3) errors[i]!++;
      },
    },
  ).catch(timeoutAsError);
  return { fromMs, bucketMs, lines, errors, partial: r.cut };
}

/** units.downloadJournal: the filtered range as text, at most JOURNAL_DOWNLOAD_MAX_LINES lines (the newest), saying when cut. */
export async function downloadJournal(systemd: SystemdAdapter, name: string, input: JournalRangeInput, nowMs = Date.now()): Promise<JournalDownload> {
  const { since, until } = rangeOf(input, nowMs);
  const r = await searchOf(systemd)(
    { ...query(name, { ...input, since, until }), limit: JOURNAL_DOWNLOAD_MAX_LINES + 1 },
    { bounds: { ...DOWNLOAD_BOUNDS, maxLines: JOURNAL_DOWNLOAD_MAX_LINES + 1 } },
  ).catch(timeoutAsError);
  let entries = r.entries;
  let cut = r.cut;
  if (entries.length > JOURNAL_DOWNLOAD_MAX_LINES) {
    entries = entries.slice(entries.length - JOURNAL_DOWNLOAD_MAX_LINES);
    cut = true;
  }
  const out: string[] = [];
  let bytes = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const line = downloadLine(entries[i]!);
    bytes += line.length + 1;
    if (bytes > DOWNLOAD_MAX_TEXT) {
      cut = true;
      break;
    }
    out.push(line);
  }
  out.reverse();
  const head = cut ? [`# cut: the range held more than shown; these are the newest ${out.length} lines (at most ${JOURNAL_DOWNLOAD_MAX_LINES})`] : [];
  return { text: [...head, ...out, ""].join("\n"), lines: out.length, cut };
}
