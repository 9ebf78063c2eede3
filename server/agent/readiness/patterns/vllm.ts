/**
 * vLLM (V0 and V1 engines, `vllm serve` and the OpenAI api_server): the load stages it logs
 * (weights, torch.compile, KV-cache sizing, CUDA-graph capture, the API server), the durations it
 * reports, its ready line and its fatal errors. Lines are records after lines.ts (worker
 * prefix removed); the engine's own "INFO 05-01 03:12:04 [file.py:123]" header stays and is
 * not anchored on, as it varies between versions.
 */
import { RAY_PATTERNS } from "./ray";
import { num, progressOf, type LinePattern } from "./types";

export const VLLM_PATTERNS: LinePattern[] = [
  {
    id: "vllm-start-load",
    // V1: "[gpu_model_runner.py:1595] Starting to load model /models/kimi-k2.5..."; V0: "Loading model weights …"
    re: /Starting to load model |\] Loading model from scratch/,
    meaning: () => ({ stage: "loading weights" }),
  },
  {
    id: "vllm-weights-took",
    // "[default_loader.py:272] Loading weights took 24.84 seconds"
    re: /Loading weights took ([\d.]+) seconds/,
    meaning: (m) => ({ stage: "weights loaded", timing: { stage: "loading weights", seconds: num(m[1]) } }),
  },
  {
    id: "vllm-model-loading-took",
    // V1: "Model loading took 12.66 GiB memory and 31.66 s" / "… 12.66 GiB and 31.661258 seconds"; V0: "Loading model weights took 12.66 GB"
    re: /(?:Model loading|Loading model weights) took ([\d.]+) Gi?B(?: memory)?(?: and ([\d.]+) s(?:econds)?)?/,
    meaning: (m) => ({ stage: "weights loaded", ...(m[2] ? { timing: { stage: "loading the model", seconds: num(m[2]) } } : {}) }),
  },
  {
    id: "vllm-compile",
    // "Using cache directory: /root/.cache/vllm/torch_compile_cache/… for vLLM's torch.compile", "Dynamo bytecode transform time: 11.42 s"
    re: /for vLLM's torch\.compile|Dynamo bytecode transform time|Compiling a graph for (?:dynamic|general) shape/,
    meaning: () => ({ stage: "compiling (torch.compile)" }),
  },
  {
    id: "vllm-compile-took",
    // "torch.compile takes 31.70 s in total"
    re: /torch\.compile takes ([\d.]+) s in total/,
    meaning: (m) => ({ stage: "compiled (torch.compile)", timing: { stage: "torch.compile", seconds: num(m[1]) } }),
  },
  {
    id: "vllm-kv-cache",
    // V1: "GPU KV cache size: 613,024 tokens", "Available KV cache memory: 41.2 GiB"; V0: "# GPU blocks: 27713, # CPU blocks: 2048", "Memory profiling takes 4.3 seconds"
    re: /GPU KV cache size: ([\d,]+) tokens|Available KV cache memory:|# (?:GPU|cuda) blocks: \d+|Memory profiling takes [\d.]+ seconds/,
    meaning: () => ({ stage: "allocating KV cache" }),
  },
  {
    id: "vllm-graphs",
    // V0: "Capturing cudagraphs for decoding. This may lead to unexpected consequences …", "Capturing the model for CUDA graphs."
    re: /Capturing cudagraphs for decoding|Capturing the model for CUDA graphs/,
    meaning: () => ({ stage: "capturing CUDA graphs" }),
  },
  {
    id: "vllm-graphs-bar",
    // "Capturing CUDA graph shapes:  49%|████▉     | 33/67 [00:10<00:10,  3.2it/s]", newer "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|…| 67/67 […]"
    re: /Capturing CUDA graph(?: shapes|s \([^)]*\)):\s*\d+%\|[^|]*\|\s*(\d+)\/(\d+)/,
    meaning: (m) => ({ stage: "capturing CUDA graphs", progress: progressOf(m[1], m[2]) }),
  },
  {
    id: "vllm-graphs-took",
    // "Graph capturing finished in 17 secs, took 0.59 GiB"
    re: /Graph capturing finished in ([\d.]+) secs?/,
    meaning: (m) => ({ stage: "CUDA graphs captured", timing: { stage: "capturing CUDA graphs", seconds: num(m[1]) } }),
  },
  {
    id: "vllm-init-took",
    // "init engine (profile, create kv cache, warmup model) took 34.11 seconds"
    re: /init engine \(profile, create kv cache, warmup model\) took ([\d.]+) seconds/,
    meaning: (m) => ({ stage: "starting API server", timing: { stage: "engine init", seconds: num(m[1]) } }),
  },
  {
    id: "vllm-api-server",
    // "Starting vLLM API server 0 on http://0.0.0.0:8000", "Started server process [4121]", "Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)"
    re: /Starting vLLM API server|Uvicorn running on |Started server process \[\d+\]|Waiting for application startup/,
    meaning: () => ({ stage: "starting API server" }),
  },
  {
    id: "vllm-ready",
    re: /Application startup complete/,
    meaning: () => ({ ready: true }),
  },
  {
    id: "vllm-no-cache-memory",
    // "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."
    re: /No available memory for the cache blocks/,
    meaning: () => ({ failure: "no GPU memory left for the KV cache blocks (gpu_memory_utilization too low for this model)" }),
  },
  {
    id: "vllm-free-memory",
    // "ValueError: Free memory on device (17.36/79.19 GiB) on startup is less than desired GPU memory utilization (0.9, 71.27 GiB). …"
    re: /Free memory on device(?: \S+)? \(([\d.]+)\/([\d.]+) GiB\) on startup is less than desired GPU memory utilization \(([\d.]+), ([\d.]+) GiB\)/,
    meaning: (m) => ({
      failure: `only ${m[1]} of ${m[2]} GiB GPU memory was free at start, less than --gpu-memory-utilization ${m[3]} asks for (${m[4]} GiB)`,
      context: true,
    }),
  },
  {
    id: "vllm-max-len",
    // "ValueError: The model's max seq len (131072) is larger than the maximum number of tokens that can be stored in KV cache (61440). …"
    re: /The model's max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored in KV cache \((\d+)\)/,
    meaning: (m) => ({ failure: `the model's max seq len (${m[1]}) does not fit in the KV cache (${m[2]} tokens)` }),
  },
  {
    id: "vllm-model-not-found",
    // "OSError: /models/llama is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'"
    re: /(\S+) is not a local folder and is not a valid model identifier|No such file or directory: '([^']+)'|Repository Not Found for url/,
    meaning: (m) => ({ failure: `model not found${(m[1] ?? m[2]) ? `: ${m[1] ?? m[2]}` : ""}` }),
  },
  {
    id: "vllm-engine-init-failed",
    // "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_0': 1}"
    re: /Engine core initialization failed|Engine process failed to start/,
    // a wrapper: the cause is the exception above it (the EngineCore's own traceback)
    meaning: () => ({ failure: "engine core initialization failed", generic: true, wrapper: true }),
  },
  {
    id: "vllm-kv-max-len",
    // V1: "ValueError: To serve at least one request with the models's max seq len (262144), (24.00 GiB KV cache is needed, which is larger than the available KV cache memory (9.74 GiB). Based on the available memory, the estimated maximum model length is 106368. …"
    re: /max seq len \((\d+)\), \(([\d.]+) GiB KV cache is needed, which is larger than the available KV cache memory \(([\d.]+) GiB\)(?:\. Based on the available memory, the estimated maximum model length is (\d+))?/,
    meaning: (m) => ({
      failure: `the model's max seq len (${m[1]}) needs ${m[2]} GiB of KV cache, more than the ${m[3]} GiB left${m[4] ? ` (at most ${m[4]} tokens fit: lower --max-model-len or raise --gpu-memory-utilization)` : ""}`,
    }),
  },
  ...RAY_PATTERNS,
];
