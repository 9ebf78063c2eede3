/**
 * SGLang (`python -m sglang.launch_server`): weights, memory pool / KV cache, CUDA-graph
 * capture, then Uvicorn listens *before* warm-up; "The server is fired up and ready to roll!"
 * is its ready line. Records look like "[2025-05-01 03:12:04 TP3] Load weight begin. …".
 */
import { num, progressOf, type LinePattern } from "./types";

export const SGLANG_PATTERNS: LinePattern[] = [
  {
    id: "sglang-load-begin",
    // "Load weight begin. avail mem=76.21 GB"
    re: /Load weight begin\./,
    meaning: () => ({ stage: "loading weights" }),
  },
  {
    id: "sglang-load-end",
    // "Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=12.34 GB, mem usage=63.87 GB."
    re: /Load weight end\./,
    meaning: () => ({ stage: "weights loaded" }),
  },
  {
    id: "sglang-kv-cache",
    // "KV Cache is allocated. #tokens: 1523450, K size: 20.1 GB, V size: 20.1 GB", "Memory pool end. avail mem=8.12 GB"
    re: /KV Cache is allocated\.|Memory pool end\./,
    meaning: () => ({ stage: "allocating KV cache" }),
  },
  {
    id: "sglang-graphs-begin",
    // "Capture cuda graph begin. This can take up to several minutes. avail mem=8.03 GB"
    re: /Capture cuda graph begin/,
    meaning: () => ({ stage: "capturing CUDA graphs" }),
  },
  {
    id: "sglang-graphs-bar",
    // "Capturing batches (bs=160 avail_mem=7.21 GB):  45%|████▌     | 10/22 [00:04<00:05,  2.31it/s]"
    re: /Capturing batches \([^)]*\):\s*\d+%\|[^|]*\|\s*(\d+)\/(\d+)/,
    meaning: (m) => ({ stage: "capturing CUDA graphs", progress: progressOf(m[1], m[2]) }),
  },
  {
    id: "sglang-graphs-end",
    // "Capture cuda graph end. Time elapsed: 12.42 s. mem usage=0.82 GB. avail mem=7.19 GB."
    re: /Capture cuda graph end\. Time elapsed: ([\d.]+) s/,
    meaning: (m) => ({ stage: "CUDA graphs captured", timing: { stage: "capturing CUDA graphs", seconds: num(m[1]) } }),
  },
  {
    id: "sglang-uvicorn",
    // Uvicorn listens before the warm-up request: /health stays 503 until it is done
    re: /Uvicorn running on |Application startup complete|Waiting for application startup/,
    meaning: () => ({ stage: "warming up" }),
  },
  {
    id: "sglang-ready",
    re: /The server is fired up and ready to roll!/,
    meaning: () => ({ ready: true }),
  },
  {
    id: "sglang-not-enough-memory",
    // "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
    re: /Not enough memory\. Please try to increase --mem-fraction-static/,
    meaning: () => ({ failure: "not enough GPU memory for the KV cache (--mem-fraction-static too low)" }),
  },
  {
    id: "sglang-scheduler-died",
    // "Rank 0 scheduler is dead. Please check if there are relevant logs.", "Initialization failed. warmup error: …"
    re: /scheduler is dead|Initialization failed\. warmup error/,
    meaning: () => ({ failure: "the scheduler process died during start-up", generic: true }),
  },
];
