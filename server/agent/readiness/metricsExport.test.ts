import { describe, expect, it } from "vitest";
import { unknownReadiness } from "../../contract/readiness";
import { renderMetrics } from "../metrics";

describe("readiness and engine metrics on the agent's /metrics", () => {
  it("one readiness series per state per unit, engine series labelled by unit; nothing for what the engine does not export", async () => {
    const text = await renderMetrics({
      sample: null,
      telemetry: { state: "ok", message: "", sinceMs: 0 },
      units: [],
      engines: [
        {
          unit: "vllm-a.service",
          readiness: { ...unknownReadiness(0, "vllm"), state: "serving" },
          metrics: { atMs: 0, requestsRunning: 7, requestsWaiting: 2, kvCacheUsage: 0.5, generationTokensPerS: 200, ttftSeconds: 0.3 },
        },
        {
          unit: "llama-b.service",
          readiness: { ...unknownReadiness(0, "llama.cpp"), state: "loading" },
          metrics: { atMs: 0, requestsRunning: 1, requestsWaiting: null, kvCacheUsage: null, generationTokensPerS: null, ttftSeconds: null },
        },
      ],
    });
    const lines = text.split("\n").filter((l) => l.startsWith("gpudeck_unit_readiness") || l.startsWith("gpudeck_engine_"));
    expect(lines).toEqual(
      expect.arrayContaining([
        'gpudeck_unit_readiness{unit="vllm-a.service",engine="vllm",state="serving"} 1',
        'gpudeck_unit_readiness{unit="vllm-a.service",engine="vllm",state="loading"} 0',
        'gpudeck_unit_readiness{unit="llama-b.service",engine="llama.cpp",state="loading"} 1',
        'gpudeck_engine_requests_running{unit="vllm-a.service",engine="vllm"} 7',
        'gpudeck_engine_requests_waiting{unit="vllm-a.service",engine="vllm"} 2',
        'gpudeck_engine_kv_cache_usage_ratio{unit="vllm-a.service",engine="vllm"} 0.5',
        'gpudeck_engine_generation_tokens_per_second{unit="vllm-a.service",engine="vllm"} 200',
        'gpudeck_engine_time_to_first_token_seconds{unit="vllm-a.service",engine="vllm"} 0.3',
        'gpudeck_engine_requests_running{unit="llama-b.service",engine="llama.cpp"} 1',
      ]),
    );
    expect(lines.filter((l) => l.startsWith("gpudeck_unit_readiness"))).toHaveLength(10);
    expect(lines.filter((l) => l.includes('unit="llama-b.service"') && l.startsWith("gpudeck_engine_"))).toHaveLength(1);
  });
});
