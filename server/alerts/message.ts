/**
 * What a message says: the generic webhook's JSON (`AlertWebhookPayload`, schema
 * "gpudeck.alert.v1", documented in server/alerts/README.md) and the same as text for Slack,
 * ntfy and email. One alert, or a group of one host and rule ("host gpu-b: 6 units failed").
 */
import type { AlertRuleId, AlertState, AlertView, AlertWebhookItem, AlertWebhookPayload } from "../contract/alerts";

const RULE_WORDS: Record<AlertRuleId, { one: string; many: string }> = {
  "unit-failed": { one: "failed", many: "units failed" },
  "start-limit-hit": { one: "hit the start limit", many: "units hit the start limit" },
  "stuck-activating": { one: "is stuck activating", many: "units stuck activating" },
  "not-serving": { one: "is active but not serving", many: "units active but not serving" },
  "crash-loop": { one: "is crash-looping", many: "units crash-looping" },
  "gpu-memory-exited": { one: "GPU memory held by exited processes", many: "units' exited processes hold GPU memory" },
  "agent-down": { one: "agent is down", many: "agents down" },
  "gpu-telemetry-stale": { one: "GPU telemetry is stale", many: "hosts with stale GPU telemetry" },
  "gpu-xid": { one: "GPU fault (Xid)", many: "GPU faults (Xid)" },
  "self-heal": { one: "was restarted by gpudeck (self-heal)", many: "units restarted by gpudeck (self-heal)" },
};

export const ruleWords = (rule: AlertRuleId) => RULE_WORDS[rule] ?? { one: rule, many: rule };

export function alertLink(panelUrl: string, host: string, unit: string | null): string {
  const base = panelUrl.replace(/\/+$/, "");
  return unit ? `${base}/hosts/${encodeURIComponent(host)}/units/${encodeURIComponent(unit)}` : `${base}/hosts/${encodeURIComponent(host)}`;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** who acknowledged it, when and their note, as the message's items carry them (nothing when nobody has) */
function ackFields(a: AlertView): Pick<AlertWebhookItem, "acknowledgedBy" | "acknowledgedAt" | "ackNote"> {
  if (!a.acknowledgedBy) return {};
  const at = iso(a.acknowledgedAt ?? null);
  return { acknowledgedBy: a.acknowledgedBy, ...(at ? { acknowledgedAt: at } : {}), ackNote: a.ackNote ?? null };
}

/** "Already acknowledged by alice at …: note": a start told after someone took it (inside the grouping window). */
export function alreadyAcknowledged(i: Pick<AlertWebhookItem, "acknowledgedBy" | "acknowledgedAt" | "ackNote">): string | null {
  if (!i.acknowledgedBy) return null;
  return `Already acknowledged by ${i.acknowledgedBy}${i.acknowledgedAt ? ` at ${i.acknowledgedAt}` : ""}${i.ackNote ? `: ${i.ackNote}` : "."}`;
}

function item(a: AlertView, state: AlertState, panelUrl: string): AlertWebhookItem {
  return {
    alertId: a.id,
    host: a.host,
    unit: a.unit,
    rule: a.rule,
    state,
    severity: a.severity,
    summary: a.summary,
    since: iso(a.sinceMs)!,
    resolvedAt: state === "resolved" ? iso(a.resolvedAtMs ?? a.openedAtMs) : null,
    diagnosis: a.diagnosis,
    diagnosisUnavailable: a.diagnosisUnavailable,
    link: alertLink(panelUrl, a.host, a.unit),
    ...ackFields(a),
  };
}

function singleTitle(a: AlertView, state: AlertState): string {
  const words = ruleWords(a.rule).one;
  // "vllm-x.service failed", but "GPU fault (Xid) (vllm-x.service)": those rules are about GPUs first
  const gpuFirst = a.rule === "gpu-xid" || a.rule === "gpu-memory-exited";
  const what = !a.unit ? words : gpuFirst ? `${words} (${a.unit})` : `${a.unit} ${words}`;
  return `${state === "resolved" ? "Resolved: " : ""}${a.host}: ${what}`;
}

/** One message for alerts of one host and rule that began (or ended) together. */
export function buildPayload(alerts: AlertView[], state: AlertState, messageId: number, panelUrl: string): AlertWebhookPayload {
  const items = alerts.map((a) => item(a, state, panelUrl));
  const first = items[0]!;
  const severity = items.some((i) => i.severity === "critical") ? "critical" : items.some((i) => i.severity === "warning") ? "warning" : "info";
  if (items.length === 1) {
    return { schema: "gpudeck.alert.v1", id: `gpudeck-${messageId}`, kind: "alert", title: singleTitle(alerts[0]!, state), count: 1, ...first, alerts: items };
  }
  const words = ruleWords(first.rule).many;
  const title = `${state === "resolved" ? "Resolved: " : ""}host ${first.host}: ${items.length} ${words}`;
  const since = items.reduce((min, i) => (i.since < min ? i.since : min), first.since);
  return {
    schema: "gpudeck.alert.v1",
    id: `gpudeck-${messageId}`,
    kind: "alert",
    title,
    count: items.length,
    alertId: first.alertId,
    host: first.host,
    unit: null,
    rule: first.rule,
    state,
    severity,
    summary: items.map((i) => i.unit ?? i.host).join(", "),
    since,
    resolvedAt: state === "resolved" ? items.reduce((max, i) => ((i.resolvedAt ?? "") > max ? (i.resolvedAt ?? "") : max), "") || null : null,
    diagnosis: null,
    diagnosisUnavailable: null,
    link: alertLink(panelUrl, first.host, null),
    alerts: items,
  };
}

export function testPayload(messageId: number, channelName: string, panelUrl: string, nowMs: number): AlertWebhookPayload {
  const at = new Date(nowMs).toISOString();
  const item: AlertWebhookItem = {
    alertId: 0,
    host: "gpudeck",
    unit: null,
    rule: "unit-failed",
    state: "firing",
    severity: "info",
    summary: `A test message for the channel "${channelName}": if you read this, alerts reach you.`,
    since: at,
    resolvedAt: null,
    diagnosis: null,
    diagnosisUnavailable: null,
    link: `${panelUrl.replace(/\/+$/, "")}/alerts`,
  };
  return {
    schema: "gpudeck.alert.v1",
    id: `gpudeck-${messageId}`,
    kind: "test",
    title: `gpudeck test message (${channelName})`,
    count: 1,
    ...item,
    alerts: [item],
  };
}

const MAX_LISTED = 20;

/** The message as plain text lines (ntfy, email; Slack adds its own markup). */
export function textLines(p: AlertWebhookPayload): string[] {
  if (p.kind === "test") return [p.summary];
  if (p.count === 1) {
    const lines = [p.summary];
    const acked = p.kind === "alert" && p.state === "firing" ? alreadyAcknowledged(p) : null;
    if (acked) lines.push(acked);
    if (p.diagnosis) {
      lines.push("", `Diagnosis: ${p.diagnosis.headline}`);
      if (p.diagnosis.nextStep) lines.push(`Next step: ${p.diagnosis.nextStep}`);
    } else if (p.diagnosisUnavailable) lines.push("", `No diagnosis: ${p.diagnosisUnavailable}.`);
    lines.push("", p.state === "resolved" ? `Since ${p.since}, resolved ${p.resolvedAt}.` : `Since ${p.since}.`);
    return lines;
  }
  // a start told after someone took one of its alerts (inside the grouping window) says so
  const start = p.kind === "alert" && p.state === "firing";
  const line = (a: AlertWebhookItem) =>
    `- ${a.unit ?? a.host}: ${a.diagnosis?.headline ?? a.summary}${start && a.acknowledgedBy ? ` (acknowledged by ${a.acknowledgedBy})` : ""}`;
  const lines = p.alerts.slice(0, MAX_LISTED).map(line);
  if (p.alerts.length > MAX_LISTED) lines.push(`… and ${p.alerts.length - MAX_LISTED} more`);
  return lines;
}

export function plainText(p: AlertWebhookPayload): string {
  return [...textLines(p), "", p.link].join("\n");
}
