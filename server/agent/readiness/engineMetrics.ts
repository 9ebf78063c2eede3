/**
 * The engine metrics gpudeck shows, from each engine's own series: requests running and
 * waiting, KV-cache usage, generated tokens per second, the mean time to first token, and p50/p95
 * of time to first token and inter-token latency (from the histograms' buckets). Rates, means
 * and quantiles come from two consecutive scrapes (a counter that went down was reset: no rate
 * then). Pure: the caller keeps the previous reading.
 */
import type { EngineKind, EngineMetrics } from "../../contract/readiness";
import { parseHistogramBuckets, quantileBetween, type HistogramBuckets } from "./histogram";
import { parsePrometheusText, type SeriesValues } from "./prometheus";

interface Series {
  running: string[];
  waiting: string[];
  /** a fraction 0..1; the largest over label sets (the fullest engine) */
  kvCache: string[];
  /** a counter of generated tokens */
  tokensTotal: string[];
  /** the engine's own tokens/s gauge, preferred over the counter's rate */
  tokensGauge: string[];
  /** a histogram (its _sum and _count; its buckets for p50/p95) */
  ttft: string | null;
  /** inter-token latency histograms, newest name first */
  itl: string[];
}

export const ENGINE_SERIES: Partial<Record<EngineKind, Series>> = {
  vllm: {
    running: ["vllm:num_requests_running"],
    waiting: ["vllm:num_requests_waiting"],
    // vllm:gpu_cache_usage_perc before v0.10 (a fraction despite its name)
    kvCache: ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"],
    tokensTotal: ["vllm:generation_tokens_total"],
    tokensGauge: [],
    ttft: "vllm:time_to_first_token_seconds",
    itl: ["vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"],
  },
  sglang: {
    running: ["sglang:num_running_reqs"],
    waiting: ["sglang:num_queue_reqs"],
    kvCache: ["sglang:token_usage"],
    tokensTotal: ["sglang:generation_tokens_total"],
    tokensGauge: ["sglang:gen_throughput"],
    ttft: "sglang:time_to_first_token_seconds",
    itl: ["sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"],
  },
  "llama.cpp": {
    running: ["llamacpp:requests_processing"],
    waiting: ["llamacpp:requests_deferred"],
    kvCache: ["llamacpp:kv_cache_usage_ratio"],
    tokensTotal: ["llamacpp:tokens_predicted_total"],
    tokensGauge: [],
    ttft: null,
    itl: [],
  },
};

/** What one scrape read, kept for the next one's rates. */
export interface MetricsReading {
  atMs: number;
  metrics: EngineMetrics;
  tokensTotal: number | null;
  ttftSum: number | null;
  ttftCount: number | null;
  /** the histograms' buckets, for the next scrape's quantiles */
  buckets?: HistogramBuckets;
  /** p50/p95 between the previous scrape and this one, ms; null = no observation or not exported */
  latency?: EngineLatency;
}

export interface EngineLatency {
  ttftP50Ms: number | null;
  ttftP95Ms: number | null;
  itlP50Ms: number | null;
  itlP95Ms: number | null;
}

export function readEngineMetrics(engine: EngineKind, text: string, atMs: number, previous: MetricsReading | null): MetricsReading | null {
  const s = ENGINE_SERIES[engine];
  if (!s) return null;
  const wanted = new Set([
    ...s.running,
    ...s.waiting,
    ...s.kvCache,
    ...s.tokensTotal,
    ...s.tokensGauge,
    ...(s.ttft ? [`${s.ttft}_sum`, `${s.ttft}_count`] : []),
  ]);
  const values = parsePrometheusText(text, wanted);
  const tokensTotal = first(values, s.tokensTotal, sum);
  const ttftSum = s.ttft ? first(values, [`${s.ttft}_sum`], sum) : null;
  const ttftCount = s.ttft ? first(values, [`${s.ttft}_count`], sum) : null;
  const dt = previous ? (atMs - previous.atMs) / 1000 : 0;
  const rate =
    previous && dt > 0 && tokensTotal !== null && previous.tokensTotal !== null && tokensTotal >= previous.tokensTotal
      ? (tokensTotal - previous.tokensTotal) / dt
      : null;
  const dCount = previous && ttftCount !== null && previous.ttftCount !== null ? ttftCount - previous.ttftCount : 0;
  const dSum = previous && ttftSum !== null && previous.ttftSum !== null ? ttftSum - previous.ttftSum : 0;
  const metrics: EngineMetrics = {
    atMs,
    requestsRunning: first(values, s.running, sum),
    requestsWaiting: first(values, s.waiting, sum),
    kvCacheUsage: first(values, s.kvCache, max),
    generationTokensPerS: first(values, s.tokensGauge, sum) ?? rate,
    ttftSeconds: dCount > 0 && dSum >= 0 ? dSum / dCount : null,
  };
  const histNames = [...(s.ttft ? [s.ttft] : []), ...s.itl];
  const buckets = parseHistogramBuckets(text, histNames);
  const itl = s.itl.find((n) => buckets.has(n));
  const q = (name: string | null | undefined, p: number) => {
    const v = name ? quantileBetween(previous?.buckets?.get(name), buckets.get(name), p) : null;
    return v === null ? null : v * 1000;
  };
  const latency: EngineLatency = { ttftP50Ms: q(s.ttft, 0.5), ttftP95Ms: q(s.ttft, 0.95), itlP50Ms: q(itl, 0.5), itlP95Ms: q(itl, 0.95) };
  return { atMs, metrics, tokensTotal, ttftSum, ttftCount, buckets, latency };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const max = (xs: number[]) => Math.max(...xs);

/** The first of `names` the engine exported, reduced over its label sets; null when none (or not a finite number). */
function first(values: SeriesValues, names: string[], reduce: (xs: number[]) => number): number | null {
  for (const n of names) {
    const list = values.get(n)?.filter(Number.isFinite);
    if (list && list.length > 0) return reduce(list);
  }
  return null;
}
