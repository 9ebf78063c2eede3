/**
 * Which channels hear what. A channel that some rule names in `escalateTo` is an escalation
 * channel (a manager's pager, the next tier): it hears an alert only once it was escalated to it,
 * and then what follows for that alert (its acknowledgement, its resolution). Every other enabled
 * channel hears every alert, as before. Without this, the channel meant for "not acknowledged
 * after 10 min" heard every failure the moment it began, and escalating told it nothing new.
 */
import type { AlertRuleId } from "../contract/alerts";
import { ruleSetting, type RuleTable } from "./rules";

interface NamedChannel {
  id: string;
  name: string;
  enabled: boolean;
}

/** Every channel name that a rule's escalateTo names. */
export function escalationNames(rules: RuleTable): Set<string> {
  const names = new Set<string>();
  for (const entries of Object.values(rules)) for (const e of entries) for (const n of e.escalateTo) names.add(n);
  return names;
}

/** The channels an alert's start (and, when it was not escalated, its end) goes to. */
export function regularChannelIds(channels: readonly NamedChannel[], rules: RuleTable): string[] {
  const escalation = escalationNames(rules);
  return channels.filter((c) => c.enabled && !escalation.has(c.name)).map((c) => c.id);
}

/** The enabled channels this alert's rule escalates to (for an alert that was escalated). */
export function escalationChannelIds(
  channels: readonly NamedChannel[],
  rules: RuleTable,
  alert: { rule: string; host: string; unit: string | null },
): string[] {
  const setting = ruleSetting(rules, alert.rule as AlertRuleId, alert.host, alert.unit ?? "");
  if (!setting) return [];
  return channels.filter((c) => c.enabled && setting.escalateTo.includes(c.name)).map((c) => c.id);
}
