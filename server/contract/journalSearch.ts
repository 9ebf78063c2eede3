/**
 * Journal search and the unit file, as the agent and the panel share them (issue 24).
 *
 * `units.journal { name, since?, until?, priority?, grep?, boot?, cursor?, limit }`: `since` and
 * `until` are epoch ms, `priority` a syslog name (`err`) or number (0–7, "this or more severe"),
 * `grep` a literal or a simple regular expression (always case-insensitive), `boot` 0 for this
 * boot, -1 the one before … (or a boot id), `cursor` only lines after that one. `limit` lines
 * at most (`lines` is kept as an alias). Every read is bounded in lines, bytes and time.
 *
 * `units.file { name }` → `{ fragmentPath, fragment, dropIns: [{ path, text }], needDaemonReload }`.
 * Part of the contract: imports nothing else of the project but the contract.
 */
import { z } from "zod";
import { hostNameSchema } from "./fleet";
import { grepProblem, JOURNAL_GREP_MAX, JOURNAL_PRIORITY_NAMES } from "./journalGrep";
import { unitNameSchema } from "./unitNames";

// what the browser needs too, without zod (the journal's URL filters): ./journalGrep
export { grepProblem, JOURNAL_GREP_MAX, JOURNAL_PRIORITY_NAMES, journalPriorityNumber, type JournalPriorityName } from "./journalGrep";

/** One page of a search: at most this many lines. */
export const JOURNAL_SEARCH_MAX_LIMIT = 5000;
/** A download of the filtered range: at most this many lines, then it says it was cut. */
export const JOURNAL_DOWNLOAD_MAX_LINES = 50_000;
/** The histogram counts at most this many lines of a range (then says it is partial). */
export const JOURNAL_HISTOGRAM_MAX_LINES = 200_000;
/** The histogram has at most this many buckets (a minute each, wider for ranges over a day). */
export const JOURNAL_HISTOGRAM_MAX_BUCKETS = 1440;

const epochMs = z.number().int().nonnegative().max(8_640_000_000_000_000);

export const journalPrioritySchema = z.union([z.enum(JOURNAL_PRIORITY_NAMES), z.number().int().min(0).max(7)]);

/** 0 this boot, -1 the previous one …; or a 32-hex boot id. */
export const journalBootSchema = z.union([z.number().int().min(-100).max(0), z.string().regex(/^[0-9a-f]{32}$/, "boot must be 0, -1 … or a 32-hex boot id")]);

export const journalFilterFields = {
  since: epochMs.optional(),
  until: epochMs.optional(),
  priority: journalPrioritySchema.optional(),
  grep: z
    .string()
    .max(JOURNAL_GREP_MAX, `grep is longer than ${JOURNAL_GREP_MAX} characters`)
    .superRefine((g, ctx) => {
      const problem = grepProblem(g);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .optional(),
  boot: journalBootSchema.optional(),
  /** NVIDIA driver lines of the kernel log (Xid …) that name these GPUs' PCI bus ids, merged in: the timeline's "at this fault" */
  kernelPci: z
    .array(z.string().regex(/^(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?$/, "kernelPci holds PCI bus ids like 0000:3b:00.0"))
    .max(16)
    .optional(),
};

const sinceBeforeUntil = (v: { since?: number; until?: number }) => v.since === undefined || v.until === undefined || v.since <= v.until;
const sinceBeforeUntilMessage = { message: "since must not be after until", path: ["since"] };

const journalSearchObject = z
  .object({
    name: unitNameSchema,
    ...journalFilterFields,
    /** only lines after this one (a page's last cursor: the next, newer lines) */
    cursor: z.string().min(1).max(1000).optional(),
    limit: z.number().int().min(1).max(JOURNAL_SEARCH_MAX_LIMIT).optional(),
    /** the older name of `limit` */
    lines: z.number().int().min(1).max(JOURNAL_SEARCH_MAX_LIMIT).optional(),
  })
  .strict();

/** units.journal at the agent. The newest `limit` (default 200) lines that match, oldest first. */
export const journalSearchInput = journalSearchObject.refine(sinceBeforeUntil, sinceBeforeUntilMessage);
export type JournalSearchInput = z.infer<typeof journalSearchInput>;
export const hostJournalSearchInput = journalSearchObject.extend({ host: hostNameSchema }).refine(sinceBeforeUntil, sinceBeforeUntilMessage);

const journalRangeObject = z
  .object({
    name: unitNameSchema,
    ...journalFilterFields,
  })
  .strict();

/** units.journalHistogram / units.downloadJournal: a whole filtered range. */
export const journalRangeInput = journalRangeObject.refine(sinceBeforeUntil, sinceBeforeUntilMessage);
export type JournalRangeInput = z.infer<typeof journalRangeInput>;
export const hostJournalRangeInput = journalRangeObject.extend({ host: hostNameSchema }).refine(sinceBeforeUntil, sinceBeforeUntilMessage);

/** Lines and errors (priority ≤ err) per bucket; `partial` when the range held more than the histogram counts. */
export interface JournalHistogram {
  fromMs: number;
  bucketMs: number;
  lines: number[];
  errors: number[];
  partial: boolean;
}

/** The filtered range as text, one line each (`2026-12-03T08:12:04.123Z unit[pid]: message`). */
export interface JournalDownload {
  text: string;
  lines: number;
  /** true when the range held more than JOURNAL_DOWNLOAD_MAX_LINES (or the byte bound): the oldest were left out */
  cut: boolean;
}

export const unitFileInput = z.object({ name: unitNameSchema }).strict();
export const hostUnitFileInput = z.object({ host: hostNameSchema, name: unitNameSchema }).strict();

export interface UnitFile {
  /** systemd's FragmentPath; "" when the unit has none (transient, generated) */
  fragmentPath: string;
  /** the file's text as it is on disk now (secrets masked); null when it cannot be read */
  fragment: string | null;
  /** DropInPaths, each with its text (secrets masked) */
  dropIns: { path: string; text: string | null }[];
  /** NeedDaemonReload: the file changed on disk since systemd loaded it */
  needDaemonReload: boolean;
  /** the effective ExecStart= and Environment= lines systemd runs (secrets masked), in unit-file syntax */
  effective: string[];
  /** a file could not be read (size, permission): in words */
  problems: string[];
  /** true when an admin asked to see secrets (audited at the panel) */
  revealed?: boolean;
}
