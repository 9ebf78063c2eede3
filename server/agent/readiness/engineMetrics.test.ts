import { describe, expect, it } from "vitest";
import { readEngineMetrics } from "./engineMetrics";
import { parsePrometheusText } from "./prometheus";

// Written in the engines' formats (vLLM V1 with engine/model_name labels, SGLang, llama.cpp --metrics).
const vllm = (
  tokens: number,
  ttftSum: number,
  ttftCount: number,
  kvName = "vllm:kv_cache_usage_perc",
) => `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 4.0
vllm:num_requests_running{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 2.0
# TYPE ${kvName} gauge
${kvName}{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.25
${kvName}{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.5
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} ${tokens}
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 10.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="meta-llama/Llama-3.1-8B-Instruct"} ${ttftCount}
vllm:time_to_first_token_seconds_count{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} ${ttftCount}
vllm:time_to_first_token_seconds_sum{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} ${ttftSum}
`;

describe("Prometheus text", () => {
  it("reads the wanted names only, every label set, quoted labels with escapes, NaN and Inf", () => {
    const text = 'a{x="1"} 2\na{x="q\\"}"} 3 1714533124000\nb 4\n# c 5\nc{le="+Inf"} +Inf\nd NaN\ne{broken 1\n';
    const v = parsePrometheusText(text, new Set(["a", "c", "d", "e"]));
    expect(v.get("a")).toEqual([2, 3]);
    expect(v.get("c")).toEqual([Infinity]);
    expect(v.get("d")).toEqual([NaN]);
    expect(v.has("b")).toBe(false);
    expect(v.has("e")).toBe(false);
  });
});

describe("engine metrics", () => {
  it("vLLM: sums requests over engines, the fullest KV cache, rates and mean TTFT from two scrapes", () => {
    const first = readEngineMetrics("vllm", vllm(1000, 5, 50), 0, null)!;
    expect(first.metrics).toEqual({ atMs: 0, requestsRunning: 7, requestsWaiting: 2, kvCacheUsage: 0.5, generationTokensPerS: null, ttftSeconds: null });
    const second = readEngineMetrics("vllm", vllm(3000, 8, 60), 10_000, first)!;
    expect(second.metrics).toMatchObject({ generationTokensPerS: 200, ttftSeconds: 0.3 });
    // no new request between the scrapes: no mean; a counter reset: no rate
    const third = readEngineMetrics("vllm", vllm(100, 8, 60), 20_000, second)!;
    expect(third.metrics).toMatchObject({ generationTokensPerS: null, ttftSeconds: null });
  });

  it("vLLM before v0.10: vllm:gpu_cache_usage_perc", () => {
    expect(readEngineMetrics("vllm", vllm(1, 1, 1, "vllm:gpu_cache_usage_perc"), 0, null)!.metrics.kvCacheUsage).toBe(0.5);
  });

  it("SGLang: its own throughput gauge; llama.cpp: processing/deferred and a token counter", () => {
    const sglang = `sglang:num_running_reqs{model_name="m"} 12\nsglang:num_queue_reqs{model_name="m"} 3\nsglang:token_usage{model_name="m"} 0.28\nsglang:gen_throughput{model_name="m"} 1450.5\n`;
    expect(readEngineMetrics("sglang", sglang, 0, null)!.metrics).toEqual({
      atMs: 0,
      requestsRunning: 12,
      requestsWaiting: 3,
      kvCacheUsage: 0.28,
      generationTokensPerS: 1450.5,
      ttftSeconds: null,
    });
    const llama = (n: number) =>
      `# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 1\nllamacpp:requests_deferred 0\nllamacpp:kv_cache_usage_ratio 0.125\nllamacpp:tokens_predicted_total ${n}\n`;
    const a = readEngineMetrics("llama.cpp", llama(500), 0, null)!;
    expect(readEngineMetrics("llama.cpp", llama(800), 5000, a)!.metrics).toEqual({
      atMs: 5000,
      requestsRunning: 1,
      requestsWaiting: 0,
      kvCacheUsage: 0.125,
      generationTokensPerS: 60,
      ttftSeconds: null,
    });
  });

  it("engines without Prometheus series give nothing; missing series are null, never 0", () => {
    expect(readEngineMetrics("ollama", "", 0, null)).toBeNull();
    expect(readEngineMetrics("vllm", "vllm:num_requests_running 1\n", 0, null)!.metrics).toEqual({
      atMs: 0,
      requestsRunning: 1,
      requestsWaiting: null,
      kvCacheUsage: null,
      generationTokensPerS: null,
      ttftSeconds: null,
    });
  });
});
