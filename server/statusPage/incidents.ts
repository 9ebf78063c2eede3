/**
 * Incidents on the status page: from the alert history of a service's units (start, end, one
 * plain line of cause). The cause is the diagnosis headline only when, stripped, nothing in it
 * could be a command line, a PID, a path, a setting or a unit name; otherwise a fixed phrase for
 * the diagnosis code (or the rule). Safe by construction: what cannot be proven harmless is
 * replaced, never shown.
 */
import type { AlertDiagnosis, AlertRuleId, AlertView } from "../contract/alerts";
import type { StatusIncident } from "../contract/statusPage";

/** Rules that say something about a service (a host's agent being away does not). */
export const SERVICE_RULES: readonly AlertRuleId[] = ["unit-failed", "start-limit-hit", "stuck-activating", "not-serving", "crash-loop", "gpu-xid"];

const RULE_PHRASES: Record<string, string> = {
  "unit-failed": "The service failed.",
  "start-limit-hit": "The service failed repeatedly and was not restarted again.",
  "stuck-activating": "The service took too long to start.",
  "not-serving": "The service was running but not answering.",
  "crash-loop": "The service kept crashing and restarting.",
  "gpu-xid": "A GPU fault occurred.",
};

const CODE_PHRASES: [RegExp, string][] = [
  [/^start-pre-failed$/, "A preparation step before the start failed."],
  [/^start-failed$/, "The service failed to start."],
  [/^start-post-failed$/, "A step after the start failed."],
  [/^(exited-after-start|main-exited)$/, "The service stopped unexpectedly."],
  [/^oom-killed$/, "The service ran out of memory."],
  [/^(start-timeout|start-pre-running|start-running|start-post-running)$/, "The service took too long to start."],
  [/^stop-timeout|^stop-stuck$|^stopping$/, "The service took too long to stop."],
  [/^crash-loop/, "The service kept crashing and restarting."],
  [/^auto-restart-pending$/, "The service was restarting after a failure."],
  [/^start-limit-hit$/, "The service failed repeatedly and was not restarted again."],
  [/^waiting-gpu-/, "The service waited for GPU memory to become free."],
  [/^dependency-failed$/, "A service it depends on failed."],
  [/^(not-found|masked|bad-setting|load-error|unit-file-gone)$/, "The service's configuration could not be loaded."],
  [/^gpu-xid$/, "A GPU fault occurred."],
  [/^engine-loading$/, "The model was still loading."],
  [/^engine-not-serving$/, "The service was running but not answering."],
  [/^engine-failed$/, "The model server failed."],
  [/^(start-skipped|start-refused)$/, "The service could not be started."],
];

/** Anything that may be a command line, PID, path, setting, unit or host detail. */
const UNSAFE = /[`"“”‘’/\\=<>{}[\]$|;]|(^|\s)'|\bpids?\b|\b\d{3,}\b|\.(service|socket|target|timer|scope|slice|mount)\b|exec|journal|systemctl|cgroup|@/i;

/** The headline's first sentence, if it is plain and short enough to be shown to anyone. */
export function safeHeadline(headline: string): string | null {
  const first = headline
    .split(/(?<=[.;:])\s/)[0]!
    .replace(/[;:]$/, ".")
    .trim();
  if (first.length === 0 || first.length > 140 || UNSAFE.test(first)) return null;
  return /[.!?]$/.test(first) ? first : `${first}.`;
}

export function publicCause(rule: string, diagnosis: AlertDiagnosis | null): string {
  if (diagnosis) {
    const safe = safeHeadline(diagnosis.headline);
    if (safe) return safe;
    const phrase = CODE_PHRASES.find(([re]) => re.test(diagnosis.code));
    if (phrase) return phrase[1];
  }
  return RULE_PHRASES[rule] ?? "The service had a problem.";
}

/** A service's incidents from its units' alerts, newest first, overlapping ones of a group merged. */
export function incidentsOf(alerts: readonly AlertView[], max = 10): StatusIncident[] {
  const relevant = alerts.filter((a) => SERVICE_RULES.includes(a.rule) && !a.silenced).sort((a, b) => a.sinceMs - b.sinceMs);
  const merged: StatusIncident[] = [];
  for (const a of relevant) {
    const last = merged[merged.length - 1];
    const end = a.resolvedAtMs;
    if (last && (last.endMs === null || a.sinceMs <= last.endMs)) {
      last.endMs = last.endMs === null || end === null ? null : Math.max(last.endMs, end);
      continue;
    }
    merged.push({ startMs: a.sinceMs, endMs: end, cause: publicCause(a.rule, a.diagnosis) });
  }
  return merged.reverse().slice(0, max);
}
