/**
 * The diagnosis that goes into an alert's message, asked of the unit's agent once when the alert
 * opens, with a timeout. Never from the fleet's event handlers: the engine queues it. An agent
 * that cannot answer leaves the message without one, saying why.
 */
import type { AlertDiagnosis } from "../contract/alerts";
import type { Actor } from "../contract/actors";
import type { Diagnosis } from "../contract/diagnosis";
import type { AgentClient } from "../panel/agentClient";

export const ALERTS_ACTOR: Actor = { user: "gpudeck-alerts", role: "viewer", unitPatterns: [] };

/** What diagnosing needs of a host: a HostLink fits. */
export interface DiagnosableHost {
  name: string;
  state: string;
  readonly client: AgentClient;
}

export function toAlertDiagnosis(d: Diagnosis): AlertDiagnosis {
  return {
    headline: d.headline,
    severity: d.severity,
    code: d.code,
    nextStep: d.nextStep?.text ?? null,
    evidence: d.evidence.slice(0, 12),
    ...(d.journalQuotes?.length ? { journalQuotes: d.journalQuotes } : {}),
  };
}

export async function fetchDiagnosis(
  host: DiagnosableHost | undefined,
  unit: string,
  timeoutMs: number,
): Promise<{ diagnosis: AlertDiagnosis } | { unavailable: string }> {
  if (!host) return { unavailable: "the host is no longer in this panel" };
  if (host.state !== "connected") return { unavailable: `the agent of ${host.name} is not connected` };
  try {
    const d = await host.client.units.diagnose.query({ name: unit }, { context: { actor: ALERTS_ACTOR }, signal: AbortSignal.timeout(timeoutMs) });
    return { diagnosis: toAlertDiagnosis(d) };
  } catch (err) {
    const e = err as Error;
    if (e.name === "TimeoutError" || e.name === "AbortError" || /aborted/i.test(e.message)) {
      return { unavailable: `the agent of ${host.name} did not answer within ${Math.round(timeoutMs / 1000)} s` };
    }
    return { unavailable: `the agent of ${host.name} could not diagnose it: ${e.message.slice(0, 200)}` };
  }
}
