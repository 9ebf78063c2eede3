/**
 * llama.cpp `llama-server`: it listens early (`/health` answers 503 "Loading model" meanwhile),
 * loads the GGUF (llama_model_loader / load_tensors), creates the context (KV cache), then
 * "main: model loaded" and "all slots are idle".
 */
import { type LinePattern } from "./types";

export const LLAMACPP_PATTERNS: LinePattern[] = [
  {
    id: "llamacpp-loading",
    // "main: loading model", "llama_model_loader: loaded meta data with 35 key-value pairs and 291 tensors from /models/x.gguf (version GGUF V3 (latest))"
    re: /main: loading model|llama_model_loader: loaded meta data|load_tensors: (?:loading|offload)/,
    meaning: () => ({ stage: "loading model" }),
  },
  {
    id: "llamacpp-context",
    // "llama_context: constructing llama_context", "llama_kv_cache_unified: size = 4096.00 MiB …", older "llama_new_context_with_model: n_ctx = 8192"
    re: /llama_context: constructing|llama_kv_cache(?:_unified)?: |llama_new_context_with_model: /,
    meaning: () => ({ stage: "allocating KV cache" }),
  },
  {
    id: "llamacpp-warmup",
    // "common_init_from_params: warming up the model with an empty run - please wait ... (--no-warmup to disable)"
    re: /warming up the model with an empty run/,
    meaning: () => ({ stage: "warming up" }),
  },
  {
    id: "llamacpp-ready",
    // "main: model loaded", "main: server is listening on http://127.0.0.1:8080 - starting the main loop", "srv  update_slots: all slots are idle"
    re: /main: model loaded|server is listening on \S+ - starting the main loop|all slots are idle/,
    meaning: () => ({ ready: true }),
  },
  {
    id: "llamacpp-load-failed",
    // "llama_model_load: error loading model: …", "llama_model_load_from_file_impl: failed to load model", "main: exiting due to model loading error"
    re: /error loading model: (.{1,200})|failed to load model|exiting due to model loading error/,
    meaning: (m) => ({ failure: m[1] ? `failed to load the model: ${m[1].trim()}` : "failed to load the model", ...(m[1] ? {} : { generic: true as const }) }),
  },
  {
    id: "llamacpp-gguf-missing",
    // "gguf_init_from_file: failed to open GGUF file '/models/x.gguf' (No such file or directory)"
    re: /gguf_init_from_file(?:_impl)?: failed to open (?:GGUF file )?'([^']+)'/,
    meaning: (m) => ({ failure: `model file not found: ${m[1]}` }),
  },
  {
    id: "llamacpp-cuda-alloc",
    // "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 40960.00 MiB on device 1: cudaMalloc failed: out of memory"
    re: /allocating ([\d.]+) MiB on device (\d+): cudaMalloc failed: out of memory/,
    meaning: (m) => ({ failure: `CUDA out of memory allocating ${m[1]} MiB on device ${m[2]}`, context: true }),
  },
];
