import { afterAll, describe, expect, it } from "vitest";
import { expectAllPatternsCovered, expectNothing, expectOnly, meaningOf } from "./testing";

// SGLang's format: "[2025-05-01 03:12:04 TP3] message" (TP rank in the header; DP/EP variants too).
const tp = (rank: number, msg: string) => `[2025-05-01 03:12:04 TP${rank}] ${msg}`;

describe("SGLang log lines", () => {
  afterAll(() => expectAllPatternsCovered("sglang"));

  it("weights, with the TP rank from the header", () => {
    const begin = expectOnly("sglang", tp(0, "Load weight begin. avail mem=76.21 GB"), "sglang-load-begin");
    expect({ stage: begin.meaning.stage, rank: begin.record.rank }).toEqual({ stage: "loading weights", rank: 0 });
    expect(expectOnly("sglang", tp(7, "Load weight begin. avail mem=76.21 GB"), "sglang-load-begin").record.rank).toBe(7);
    expect(meaningOf("sglang", "Loading safetensors checkpoint shards:  45% Completed | 74/163 [01:02<01:14,  1.19it/s]")[0]!.meaning.progress).toEqual({
      done: 74,
      total: 163,
    });
    expectOnly(
      "sglang",
      tp(0, "Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=12.34 GB, mem usage=63.87 GB."),
      "sglang-load-end",
    );
    expectOnly(
      "sglang",
      "[2025-05-01 03:12:04 DP1 TP3 EP3] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=61.1 GB",
      "sglang-load-end",
    );
  });

  it("memory pool and CUDA graphs, with the capture bar's progress and duration", () => {
    expectOnly("sglang", tp(0, "KV Cache is allocated. #tokens: 1523450, K size: 20.1 GB, V size: 20.1 GB"), "sglang-kv-cache");
    expectOnly("sglang", tp(0, "Memory pool end. avail mem=8.12 GB"), "sglang-kv-cache");
    expectOnly("sglang", tp(0, "Capture cuda graph begin. This can take up to several minutes. avail mem=8.03 GB"), "sglang-graphs-begin");
    const bar = expectOnly("sglang", "Capturing batches (bs=160 avail_mem=7.21 GB):  45%|████▌     | 10/22 [00:04<00:05,  2.31it/s]", "sglang-graphs-bar");
    expect(bar.meaning.progress).toEqual({ done: 10, total: 22 });
    expect(
      expectOnly("sglang", tp(0, "Capture cuda graph end. Time elapsed: 12.42 s. mem usage=0.82 GB. avail mem=7.19 GB."), "sglang-graphs-end").meaning.timing,
    ).toEqual({
      stage: "capturing CUDA graphs",
      seconds: 12.42,
    });
  });

  it("Uvicorn listens before warm-up; the ready line comes after", () => {
    expect(
      expectOnly("sglang", "[2025-05-01 03:20:11] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)", "sglang-uvicorn").meaning.stage,
    ).toBe("warming up");
    expectOnly("sglang", "[2025-05-01 03:20:11] INFO:     Application startup complete.", "sglang-uvicorn");
    expect(expectOnly("sglang", "[2025-05-01 03:22:45] The server is fired up and ready to roll!", "sglang-ready").meaning.ready).toBe(true);
  });

  it("fatal errors", () => {
    expectOnly("sglang", "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.", "sglang-not-enough-memory");
    expect(
      expectOnly("sglang", "[2025-05-01 03:13:02] Rank 0 scheduler is dead. Please check if there are relevant logs.", "sglang-scheduler-died").meaning.generic,
    ).toBe(true);
    expectOnly("sglang", "[2025-05-01 03:21:00] Initialization failed. warmup error: Traceback …", "sglang-scheduler-died");
  });

  it("request logs are not stages", () => {
    expectNothing("sglang", tp(0, "Prefill batch. #new-seq: 1, #new-token: 12, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0"));
    expectNothing("sglang", '[2025-05-01 03:23:00] INFO:     127.0.0.1:40312 - "GET /health HTTP/1.1" 200 OK');
  });
});
