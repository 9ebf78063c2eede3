/**
 * The unit page's engine facts as label/value pairs: the scraped metrics with their units, the
 * last probe of the engine's endpoint, the stage timings. Unknown is "not reported", never 0.
 */
import { formatDuration, formatMiB, formatTime } from "@/server/contract/format";
import type { EngineMetrics, EngineTiming, ReadinessProbe } from "@/server/contract/readiness";

export const NOT_REPORTED = "not reported";

const count = (n: number | null) => (n == null ? NOT_REPORTED : String(Math.round(n)));

/** Requests, KV cache, tokens/s and time to first token; null metrics (none scraped) give none. */
export function engineMetricRows(m: EngineMetrics | null | undefined): [string, string][] {
  if (!m) return [];
  return [
    ["Requests running", count(m.requestsRunning)],
    ["Requests waiting", count(m.requestsWaiting)],
    ["KV cache in use", m.kvCacheUsage == null ? NOT_REPORTED : `${(m.kvCacheUsage * 100).toFixed(m.kvCacheUsage < 0.1 ? 1 : 0)} %`],
    ["Generation", m.generationTokensPerS == null ? NOT_REPORTED : `${m.generationTokensPerS.toFixed(m.generationTokensPerS < 10 ? 1 : 0)} tokens/s`],
    [
      "Time to first token",
      m.ttftSeconds == null ? NOT_REPORTED : m.ttftSeconds < 1 ? `${Math.round(m.ttftSeconds * 1000)} ms` : `${m.ttftSeconds.toFixed(2)} s`,
    ],
  ];
}

/** "HTTP 200 at 12:00:01 (4.0 s ago)", "no answer (connection refused) at …" */
export function probeText(p: ReadinessProbe, nowMs: number, timeZone?: string): string {
  const answer = p.status == null ? "no answer" : `HTTP ${p.status}${p.ok ? "" : " (not ready)"}`;
  // the detail often repeats the status ("503: Loading model"): say it once
  const words = p.detail?.replace(/^\d{3}:\s*/, "");
  const detail = words && !(p.ok && p.status != null) ? `: ${words}` : "";
  return `${answer}${detail} at ${formatTime(p.atMs, { timeZone })} (${formatDuration(nowMs - p.atMs)} ago)`;
}

/** "loading weights 24.8 s · torch.compile 12 s" */
export function timingsText(timings: readonly EngineTiming[] | undefined): string | null {
  if (!timings || timings.length === 0) return null;
  return timings.map((t) => `${t.stage} ${formatDuration(t.seconds * 1000)}`).join(" · ");
}

/** "/models/kimi (75.2 GiB)" where the engine reports GPU memory per model. */
export function modelWithVram(model: string, vramMiB: Record<string, number> | undefined): string {
  const v = vramMiB?.[model];
  return v == null ? model : `${model} (${formatMiB(v)} of GPU memory)`;
}
