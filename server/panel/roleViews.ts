/**
 * What each role sees of what the agents report. The agents answer the panel in full; the panel
 * takes out, per caller:
 *   - journal-sourced text for callers without journal access (`journal.view`: operators and
 *     admins, viewers where GPUDECK_VIEWER_JOURNAL=1): a diagnosis's log evidence, a crash-loop
 *     report's last line, the engine's last log line in readiness, and the engine's own message
 *     quoted in a readiness reason or a diagnosis (an exception's text); each says it was hidden;
 *   - a host's connection error for everyone but admins: it names the agent's URL and the
 *     panel's token file; others get a sentence without them (contract/roleViews.ts).
 * Live events are serialized once per kind of viewer (contract/wire.ts), not once per viewer.
 */
import type { AlertView } from "../contract/alerts";
import type { Diagnosis, Evidence, NextStep } from "../contract/diagnosis";
import type { CrashLoopReport } from "../contract/faults";
import type { HostSummary, PanelEvent } from "../contract/fleet";
import type { Readiness } from "../contract/readiness";
import type { ReadinessTransition } from "../contract/readiness";
import { hostErrorForViewers, JOURNAL_HIDDEN, JOURNAL_HIDDEN_LABEL, withoutQuotes } from "../contract/roleViews";
import { preserialized, preserializedJson } from "../contract/wire";
import type { PanelAuth } from "../auth/panelAuth";
import type { Subject } from "../auth/authorize";

export interface ViewRights {
  /** may read units' journals */
  journal: boolean;
  /** sees hosts' connection errors in full */
  admin: boolean;
}

export const FULL_VIEW: Readonly<ViewRights> = Object.freeze({ journal: true, admin: true });

/** What `actor` (the request's, or the user as stored now when a stream re-checks) may see. */
export function viewRightsOf(actor: Subject | null, auth: Pick<PanelAuth, "can">): ViewRights {
  return { journal: auth.can(actor, "journal.view").allowed, admin: actor?.role === "admin" };
}

export function sameRights(a: ViewRights, b: ViewRights): boolean {
  return a.journal === b.journal && a.admin === b.admin;
}

/** A reason (readiness, a readiness transition) without the engine's quoted message. */
function viewReason<T extends { reason: string | null; reasonQuote?: string | null }>(r: T): T {
  if (!r.reasonQuote) return r;
  return { ...r, reason: r.reason === null ? null : withoutQuotes(r.reason, [r.reasonQuote]), reasonQuote: null };
}

export function viewReadiness<T extends Readiness | undefined>(r: T, rights: ViewRights): T {
  if (rights.journal || !r || (r.line == null && !r.lineHidden && !r.reasonQuote)) return r;
  return { ...viewReason(r), line: null, lineHidden: r.line != null || r.lineHidden === true };
}

/** The timeline's readiness transitions as the caller may see them. */
export function viewReadinessTransitions(ts: ReadinessTransition[], rights: ViewRights): ReadinessTransition[] {
  return rights.journal || !ts.some((t) => t.reasonQuote) ? ts : ts.map(viewReason);
}

/** A unit (summary or detail) with its readiness as the caller may see it. */
export function viewUnit<T extends { readiness?: Readiness }>(u: T, rights: ViewRights): T {
  if (rights.journal || (!u.readiness?.line && !u.readiness?.reasonQuote)) return u;
  return { ...u, readiness: viewReadiness(u.readiness, rights) };
}

export function viewHostSummary(s: HostSummary, rights: ViewRights): HostSummary {
  return rights.admin || s.error === null ? s : { ...s, error: hostErrorForViewers(s.error) };
}

export function viewDiagnosis(d: Diagnosis, rights: ViewRights): Diagnosis {
  if (rights.journal) return d;
  const quoted = unquoted(d);
  const kept = quoted.evidence.filter((e) => e.source !== "journal");
  const hidden = quoted.evidence.length - kept.length;
  if (hidden === 0) return quoted;
  return { ...quoted, evidence: [...kept, { label: JOURNAL_HIDDEN_LABEL, value: `${hidden} ${JOURNAL_HIDDEN}`, source: "gpudeck" }], journalHidden: hidden };
}

/** An alert as the caller may see it: its diagnosis without log evidence or quoted log text for callers without journal access. */
export function viewAlert<T extends AlertView>(a: T, rights: ViewRights): T {
  const d = a.diagnosis;
  if (rights.journal || !d) return a;
  const quoted = unquoted(d);
  const kept = quoted.evidence.filter((e) => e.source !== "journal");
  const hidden = quoted.evidence.length - kept.length;
  if (hidden === 0 && quoted === d) return a;
  if (hidden > 0) kept.push({ label: JOURNAL_HIDDEN_LABEL, value: `${hidden} ${JOURNAL_HIDDEN}`, source: "gpudeck" });
  return { ...a, diagnosis: { ...quoted, evidence: kept, journalQuotes: [] } };
}

/** What carries quoted log text: a diagnosis, or an alert's (whose next step is a plain sentence). */
interface Quoting {
  headline: string;
  nextStep?: NextStep | string | null;
  evidence: Evidence[];
  journalQuotes?: string[];
}

/** A diagnosis (or an alert's) without the log text it quotes (journalQuotes) in its sentences. */
function unquoted<T extends Quoting>(d: T): T {
  const quotes = d.journalQuotes ?? [];
  if (quotes.length === 0) return d;
  const hide = (t: string) => withoutQuotes(t, quotes);
  const next = d.nextStep;
  return {
    ...d,
    headline: hide(d.headline),
    ...(typeof next === "string" ? { nextStep: hide(next) } : next ? { nextStep: { ...next, text: hide(next.text) } } : {}),
    evidence: d.evidence.map((e) => ({ ...e, value: hide(e.value) })),
    journalQuotes: [],
  };
}

export function viewCrashLoop<T extends CrashLoopReport>(r: T, rights: ViewRights): T {
  if (rights.journal || r.lastLogLine === null) return r;
  return { ...r, lastLogLine: null, lastLogLineHidden: true };
}

/** A live event as the caller may see it (the same object when nothing in it is for them to miss). */
export function viewPanelEvent(e: PanelEvent, rights: ViewRights): PanelEvent {
  switch (e.kind) {
    case "fleet-snapshot":
      return { ...e, hosts: e.hosts.map((h) => viewHostSummary(h, rights)), units: e.units.map((u) => viewUnit(u, rights)) };
    case "host-snapshot":
      return { ...e, summary: viewHostSummary(e.summary, rights), units: e.units.map((u) => viewUnit(u, rights)) };
    case "hosts":
      return { ...e, hosts: e.hosts.map((h) => viewHostSummary(h, rights)) };
    case "host-units":
      return { ...e, units: e.units.map((u) => viewUnit(u, rights)) };
    case "unit":
      return { ...e, unit: viewUnit(e.unit, rights) };
    case "readiness":
      return { ...e, readiness: viewReadiness(e.readiness, rights) };
    default:
      return e;
  }
}

/** Texts that can only be in an event that carries something to take out (cheap to look for). */
const MAY_CARRY = /"line":\{|"error":"|"reasonQuote":"/;
const viewsByRights = new Map<string, WeakMap<object, PanelEvent>>();

/**
 * A stream item's data (usually `preserialized`, shared by every viewer) as the caller may see
 * it: untouched for full rights or when it carries nothing to take out; else made once per kind
 * of viewer and shared by all of them.
 */
export function viewStreamData(data: PanelEvent, rights: ViewRights): PanelEvent {
  if (rights.journal && rights.admin) return data;
  const json = preserializedJson(data);
  if (json === null) return viewPanelEvent(data, rights);
  if (!MAY_CARRY.test(json)) return data;
  const key = `${rights.journal ? "j" : "-"}${rights.admin ? "a" : "-"}`;
  let cache = viewsByRights.get(key);
  if (!cache) viewsByRights.set(key, (cache = new WeakMap()));
  const key0 = data as unknown as object;
  let view = cache.get(key0);
  if (!view) {
    const parsed = JSON.parse(json) as PanelEvent;
    const seen = viewPanelEvent(parsed, rights);
    view = seen === parsed ? data : preserialized(seen);
    cache.set(key0, view);
  }
  return view;
}
