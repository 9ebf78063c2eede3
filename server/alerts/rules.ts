/**
 * Which rules apply where, and after how long. Every rule is on by default with the issue's
 * thresholds; GPUDECK_ALERT_RULES (JSON) turns rules off, changes thresholds, or does either
 * for some hosts/units only (patterns as operators' unit patterns: "gpu-a:vllm-*", "*:tgi-*",
 * "gpu-b:*" for a host's own alerts). For each rule, the first entry whose `match` fits wins;
 * an entry without `match` fits everything.
 *
 *   GPUDECK_ALERT_RULES='{"crash-loop": false,
 *     "stuck-activating": [{"match": ["gpu-a:vllm-kimi-*"], "afterMinutes": 30}, {"afterMinutes": 10}],
 *     "agent-down": {"afterMinutes": 5}}'
 */
import { z } from "zod";
import { ALERT_RULES, HOST_RULES, type AlertRuleId } from "../contract/alerts";
import { matchesUnitPatterns } from "../contract/unitNames";

const MINUTE = 60_000;

/**
 * Defaults. `afterMs`: how long the condition must hold before the alert opens; for gpu-xid, how
 * long an alert stays open after the last fault (a fault is a moment, not a state).
 */
export const RULE_DEFAULTS: Record<AlertRuleId, number> = {
  "unit-failed": 0,
  "start-limit-hit": 0,
  "stuck-activating": 10 * MINUTE,
  "not-serving": 10 * MINUTE,
  "crash-loop": 0,
  "gpu-memory-exited": 5 * MINUTE,
  "agent-down": 2 * MINUTE,
  "gpu-telemetry-stale": 2 * MINUTE,
  "gpu-xid": 30 * MINUTE,
  "self-heal": 0,
};

export interface RuleEntry {
  /** null: everything */
  match: string[] | null;
  enabled: boolean;
  afterMs: number;
  /** unacknowledged this long after it opened → sent to `escalateTo` too, once; null: never */
  escalateAfterMs: number | null;
  /** channel names */
  escalateTo: string[];
}

const DURATION_UNITS: Record<string, number> = { s: 1000, m: MINUTE, h: 60 * MINUTE };

/** "20s", "10m", "1h" → milliseconds; null when it is not one. */
export function parseDuration(text: string): number | null {
  const m = /^(\d{1,6})(s|m|h)$/.exec(text.trim());
  if (!m) return null;
  const ms = Number(m[1]) * DURATION_UNITS[m[2]!]!;
  return ms > 0 ? ms : null;
}

export type RuleTable = Record<AlertRuleId, RuleEntry[]>;

export class AlertRulesError extends Error {}

const entrySchema = z
  .object({
    match: z.union([z.string().min(1).max(300), z.array(z.string().min(1).max(300)).min(1).max(100)]).optional(),
    enabled: z.boolean().optional(),
    afterMinutes: z.number().nonnegative().max(100_000).optional(),
    afterSeconds: z.number().nonnegative().max(10_000_000).optional(),
    escalateAfter: z
      .string()
      .refine((v) => parseDuration(v) !== null, 'escalateAfter must be a duration such as "20s", "10m" or "1h"')
      .optional(),
    escalateTo: z.array(z.string().trim().min(1).max(64)).min(1, "escalateTo names at least one channel").max(20).optional(),
  })
  .strict()
  .refine((e) => e.afterMinutes === undefined || e.afterSeconds === undefined, "give afterMinutes or afterSeconds, not both")
  .refine((e) => (e.escalateAfter === undefined) === (e.escalateTo === undefined), "give escalateAfter and escalateTo together");

const ruleValue = z.union([z.boolean(), entrySchema, z.array(entrySchema).min(1).max(100)]);
const rulesSchema = z.partialRecord(z.enum(ALERT_RULES), ruleValue);

const plainEntry = (enabled: boolean, afterMs: number): RuleEntry => ({ match: null, enabled, afterMs, escalateAfterMs: null, escalateTo: [] });

export function defaultRules(): RuleTable {
  return Object.fromEntries(ALERT_RULES.map((r) => [r, [plainEntry(true, RULE_DEFAULTS[r])]])) as RuleTable;
}

/** GPUDECK_ALERT_RULES → the rule table (defaults where it says nothing). */
export function parseAlertRules(json: string | undefined): RuleTable {
  const table = defaultRules();
  if (!json?.trim()) return table;
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    throw new AlertRulesError(`GPUDECK_ALERT_RULES is not JSON: ${(err as Error).message}`);
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new AlertRulesError("GPUDECK_ALERT_RULES must be a JSON object keyed by rule");
  const unknown = Object.keys(raw).filter((k) => !(ALERT_RULES as readonly string[]).includes(k));
  if (unknown.length) throw new AlertRulesError(`GPUDECK_ALERT_RULES: unknown rule ${unknown.join(", ")} (rules: ${ALERT_RULES.join(", ")})`);
  const parsed = rulesSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AlertRulesError(`GPUDECK_ALERT_RULES.${issue.path.join(".")}: ${issue.message}`);
  }
  for (const rule of ALERT_RULES) {
    const value = parsed.data[rule];
    if (value === undefined) continue;
    const fallback = RULE_DEFAULTS[rule];
    if (typeof value === "boolean") {
      table[rule] = [plainEntry(value, fallback)];
      continue;
    }
    const entries = (Array.isArray(value) ? value : [value]).map((e) => ({
      match: e.match === undefined ? null : Array.isArray(e.match) ? e.match : [e.match],
      enabled: e.enabled ?? true,
      afterMs: e.afterMinutes !== undefined ? e.afterMinutes * MINUTE : e.afterSeconds !== undefined ? e.afterSeconds * 1000 : fallback,
      escalateAfterMs: e.escalateAfter === undefined ? null : parseDuration(e.escalateAfter),
      escalateTo: e.escalateTo ?? [],
    }));
    // what no entry matches keeps the default
    if (entries.every((e) => e.match !== null)) entries.push(plainEntry(true, fallback));
    table[rule] = entries;
  }
  return table;
}

/** The setting of `rule` for this host and unit ("" for the host's own alerts); null when off there. */
export function ruleSetting(
  table: RuleTable,
  rule: AlertRuleId,
  host: string,
  unit: string,
): { afterMs: number; escalateAfterMs: number | null; escalateTo: string[] } | null {
  for (const e of table[rule] ?? []) {
    if (e.match !== null && !matchesUnitPatterns(unit, host, e.match)) continue;
    return e.enabled ? { afterMs: e.afterMs, escalateAfterMs: e.escalateAfterMs, escalateTo: e.escalateTo } : null;
  }
  return null;
}

export const isHostRule = (rule: AlertRuleId): boolean => HOST_RULES.includes(rule);

/** What the rules are, for the Alerts page. */
export function describeRules(table: RuleTable): { rule: AlertRuleId; entries: RuleEntry[] }[] {
  return ALERT_RULES.map((rule) => ({ rule, entries: table[rule] }));
}
