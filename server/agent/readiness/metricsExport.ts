/**
 * Readiness and the scraped engine metrics on the agent's /metrics, labelled by unit, so one
 * Prometheus scrape of the agent covers every engine on the host (the engines' own ports need
 * not be reachable from the monitoring system). A metric the engine does not export gives no
 * series, never 0.
 */
import { Gauge, type Registry } from "prom-client";
import type { EngineMetrics, Readiness } from "../../contract/readiness";
import { READINESS_STATES } from "../../contract/readiness";

export interface ReadinessExport {
  unit: string;
  readiness: Readiness;
  metrics: EngineMetrics | null;
}

export function registerReadinessMetrics(registers: Registry[], units: readonly ReadinessExport[]): void {
  const state = new Gauge({
    name: "gpudeck_unit_readiness",
    help: "1 for the unit's readiness state (unknown, loading, serving, not-serving, failed) and engine",
    labelNames: ["unit", "engine", "state"] as const,
    registers,
  });
  const series = {
    requestsRunning: gauge(
      registers,
      "gpudeck_engine_requests_running",
      "Requests the engine is running (vLLM num_requests_running, SGLang num_running_reqs, llama.cpp requests_processing)",
    ),
    requestsWaiting: gauge(registers, "gpudeck_engine_requests_waiting", "Requests waiting in the engine's queue"),
    kvCacheUsage: gauge(registers, "gpudeck_engine_kv_cache_usage_ratio", "Fraction of the engine's KV cache in use"),
    generationTokensPerS: gauge(registers, "gpudeck_engine_generation_tokens_per_second", "Tokens generated per second between the agent's last two scrapes"),
    ttftSeconds: gauge(
      registers,
      "gpudeck_engine_time_to_first_token_seconds",
      "Mean time to first token of the requests between the agent's last two scrapes",
    ),
  };
  for (const u of units) {
    const engine = u.readiness.engine ?? "";
    for (const s of READINESS_STATES) state.set({ unit: u.unit, engine, state: s }, u.readiness.state === s ? 1 : 0);
    if (!u.metrics) continue;
    for (const key of Object.keys(series) as (keyof typeof series)[]) {
      const v = u.metrics[key];
      if (v !== null && Number.isFinite(v)) series[key].set({ unit: u.unit, engine }, v);
    }
  }
}

function gauge(registers: Registry[], name: string, help: string): Gauge<"unit" | "engine"> {
  return new Gauge({ name, help, labelNames: ["unit", "engine"] as const, registers });
}
