/** The Alerts page's words: rule names, an alert's times, a delivery's state, the status page's groups as text. Pure. */
import type { AlertRuleId, AlertView, DeliveryView } from "@/server/contract/alerts";
import { formatDurationWords } from "@/server/contract/format";
import type { StatusGroup } from "@/server/contract/statusPage";

export const RULE_LABELS: Record<AlertRuleId, string> = {
  "unit-failed": "Unit failed",
  "start-limit-hit": "Start limit hit",
  "stuck-activating": "Stuck activating",
  "not-serving": "Active but not serving",
  "crash-loop": "Crash loop",
  "gpu-memory-exited": "GPU memory held by exited processes",
  "agent-down": "Agent down",
  "gpu-telemetry-stale": "GPU telemetry stale",
  "gpu-xid": "GPU fault (Xid)",
  "self-heal": "Restarted by self-heal",
};

/** "since 12 min", or "3 h 5 min, resolved 10 min ago" */
export function alertTimes(a: Pick<AlertView, "sinceMs" | "resolvedAtMs">, nowMs: number): string {
  if (a.resolvedAtMs === null) return `for ${formatDurationWords(nowMs - a.sinceMs)}`;
  return `lasted ${formatDurationWords(a.resolvedAtMs - a.sinceMs)}, resolved ${formatDurationWords(nowMs - a.resolvedAtMs)} ago`;
}

export function deliveryWords(d: DeliveryView, nowMs: number): string {
  if (d.status === "sent") return `sent${d.attempts > 1 ? ` after ${d.attempts} attempts` : ""}`;
  if (d.status === "failed") return `failed: ${d.lastError ?? "unknown error"}`;
  if (d.attempts === 0) return "queued";
  const next = d.nextAttemptAtMs !== null && d.nextAttemptAtMs > nowMs ? `, next try in ${formatDurationWords(d.nextAttemptAtMs - nowMs)}` : "";
  return `retrying (${d.attempts} attempts: ${d.lastError ?? "failed"})${next}`;
}

/** One line per group: "Kimi K2.5 chat = gpu-a:vllm-kimi-k25.service, gpu-b:vllm-kimi-k25.service". */
export function groupsToText(groups: readonly StatusGroup[]): string {
  return groups.map((g) => `${g.name} = ${g.units.join(", ")}`).join("\n");
}

export function textToGroups(text: string): { groups: StatusGroup[] } | { error: string } {
  const groups: StatusGroup[] = [];
  const lines = text.split("\n").map((l) => l.trim());
  for (const [i, line] of lines.entries()) {
    if (!line) continue;
    const eq = line.lastIndexOf("=");
    if (eq <= 0) return { error: `line ${i + 1}: write "Name = host:unit, host:unit"` };
    const name = line.slice(0, eq).trim();
    const units = line
      .slice(eq + 1)
      .split(/[,\s]+/)
      .filter(Boolean);
    if (!name || units.length === 0) return { error: `line ${i + 1}: a group needs a name and at least one host:unit` };
    const bad = units.find((u) => !/^[a-z0-9-]+:[^:\s]+$/.test(u));
    if (bad) return { error: `line ${i + 1}: "${bad}" is not host:unit (e.g. gpu-a:vllm-kimi-k25.service)` };
    groups.push({ name, units });
  }
  return { groups };
}
