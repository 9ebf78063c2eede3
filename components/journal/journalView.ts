/**
 * The journal view's filters in the URL, so a link reopens the same view: `jsince`/`juntil`
 * (epoch ms), `jlast` (a relative range: 15m, 1h, 6h, 24h, 7d), `jprio` (err … debug), `jq`
 * (text), `jboot` (0 this boot, -1 the previous …), `jkpci` (PCI bus ids: kernel lines of those
 * GPUs) and `jat` (a moment: ±2 minutes around it, from the timeline). Pure.
 */
import { grepProblem, JOURNAL_PRIORITY_NAMES } from "@/server/contract/journalGrep";
import { JOURNAL_KEYS } from "./journalKeys";

export interface JournalView {
  since?: number;
  until?: number;
  /** a relative range, kept relative (the view follows now) until the link is copied */
  last?: JournalRange;
  priority?: (typeof JOURNAL_PRIORITY_NAMES)[number];
  grep?: string;
  boot?: number;
  kernelPci?: string[];
}

export const JOURNAL_RANGES = { "15m": 15 * 60_000, "1h": 3600_000, "6h": 6 * 3600_000, "24h": 24 * 3600_000, "7d": 7 * 24 * 3600_000 } as const;
export type JournalRange = keyof typeof JOURNAL_RANGES;
/** ± around a moment picked on the timeline */
export const MOMENT_MS = 2 * 60_000;

export { hasJournalView } from "./journalKeys";

const int = (v: string | null) => (v !== null && /^-?\d{1,16}$/.test(v) ? Number(v) : undefined);

export function viewFromParams(p: URLSearchParams): JournalView {
  const v: JournalView = {};
  const at = int(p.get("jat"));
  if (at !== undefined && at > 0) {
    v.since = at - MOMENT_MS;
    v.until = at + MOMENT_MS;
  }
  const since = int(p.get("jsince"));
  const until = int(p.get("juntil"));
  if (since !== undefined && since >= 0) v.since = since;
  if (until !== undefined && until >= 0) v.until = until;
  if (v.since !== undefined && v.until !== undefined && v.since > v.until) delete v.until;
  const last = p.get("jlast");
  if (last && last in JOURNAL_RANGES && v.since === undefined && v.until === undefined) v.last = last as JournalRange;
  const prio = p.get("jprio");
  if (prio && (JOURNAL_PRIORITY_NAMES as readonly string[]).includes(prio)) v.priority = prio as JournalView["priority"];
  const q = p.get("jq");
  if (q && grepProblem(q) === null) v.grep = q;
  const boot = int(p.get("jboot"));
  if (boot !== undefined && boot <= 0 && boot >= -100) v.boot = boot;
  const kpci = p.get("jkpci");
  if (kpci) {
    const ids = kpci.split(",").filter((x) => /^(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?$/.test(x));
    if (ids.length > 0) v.kernelPci = ids.slice(0, 16);
  }
  return v;
}

/** `params` with the view's keys replaced (other keys, e.g. the timeline's, kept). */
export function paramsWithView(params: URLSearchParams, v: JournalView): URLSearchParams {
  const p = new URLSearchParams(params);
  for (const k of JOURNAL_KEYS) p.delete(k);
  if (v.since !== undefined) p.set("jsince", String(Math.round(v.since)));
  if (v.until !== undefined) p.set("juntil", String(Math.round(v.until)));
  if (v.last && v.since === undefined && v.until === undefined) p.set("jlast", v.last);
  if (v.priority) p.set("jprio", v.priority);
  if (v.grep) p.set("jq", v.grep);
  if (v.boot !== undefined) p.set("jboot", String(v.boot));
  if (v.kernelPci?.length) p.set("jkpci", v.kernelPci.join(","));
  return p;
}

export function isFiltered(v: JournalView): boolean {
  return Object.values(v).some((x) => x !== undefined);
}

/** The range the view asks for, as since/until ms (a relative range from now). */
export function resolved(v: JournalView, nowMs: number): { since?: number; until?: number } {
  if (v.last) return { since: nowMs - JOURNAL_RANGES[v.last] };
  return { since: v.since, until: v.until };
}

/** The same view with a relative range frozen to absolute times: what a copied link reopens. */
export function frozen(v: JournalView, nowMs: number): JournalView {
  if (!v.last) return v;
  const { last: _last, ...rest } = v;
  return { ...rest, since: nowMs - JOURNAL_RANGES[v.last], until: nowMs };
}

/** The view at a moment of the timeline: ±2 minutes, with the kernel lines of these GPUs. */
export function momentParams(params: URLSearchParams, atMs: number, kernelPci?: string[]): URLSearchParams {
  return paramsWithView(params, { since: atMs - MOMENT_MS, until: atMs + MOMENT_MS, kernelPci });
}

/** Live lines pass the view's priority and text filters (the stream itself is unfiltered). */
export function liveFilter(v: JournalView): (e: { priority: number; message: string }) => boolean {
  const prio = v.priority ? JOURNAL_PRIORITY_NAMES.indexOf(v.priority) : 7;
  const re = v.grep ? new RegExp(v.grep, "i") : null;
  return (e) => e.priority <= prio && (re === null || re.test(e.message));
}
