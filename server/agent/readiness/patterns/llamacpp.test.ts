import { afterAll, describe, expect, it } from "vitest";
import { expectAllPatternsCovered, expectNothing, expectOnly } from "./testing";

describe("llama.cpp llama-server log lines", () => {
  afterAll(() => expectAllPatternsCovered("llama.cpp"));

  it("loading the GGUF, old and new builds", () => {
    expectOnly("llama.cpp", "main: loading model", "llamacpp-loading");
    expectOnly(
      "llama.cpp",
      "llama_model_loader: loaded meta data with 35 key-value pairs and 291 tensors from /models/qwen2.5-7b-q4_k_m.gguf (version GGUF V3 (latest))",
      "llamacpp-loading",
    );
    expectOnly("llama.cpp", "load_tensors: offloading 28 repeating layers to GPU", "llamacpp-loading");
    expectOnly("llama.cpp", "load_tensors: loading model tensors, this can take a while... (mmap = true)", "llamacpp-loading");
  });

  it("the context (KV cache) and warm-up", () => {
    expect(expectOnly("llama.cpp", "llama_context: constructing llama_context", "llamacpp-context").meaning.stage).toBe("allocating KV cache");
    expectOnly("llama.cpp", "llama_kv_cache_unified:      CUDA0 KV buffer size =  4096.00 MiB", "llamacpp-context");
    expectOnly("llama.cpp", "llama_new_context_with_model: n_ctx      = 8192", "llamacpp-context");
    expectOnly("llama.cpp", "common_init_from_params: warming up the model with an empty run - please wait ... (--no-warmup to disable)", "llamacpp-warmup");
  });

  it("its ready lines", () => {
    expect(expectOnly("llama.cpp", "main: model loaded", "llamacpp-ready").meaning.ready).toBe(true);
    expectOnly("llama.cpp", "main: server is listening on http://127.0.0.1:8080 - starting the main loop", "llamacpp-ready");
    expectOnly("llama.cpp", "srv  update_slots: all slots are idle", "llamacpp-ready");
  });

  it("failures: the model file, the load, CUDA allocation", () => {
    expect(
      expectOnly("llama.cpp", "gguf_init_from_file: failed to open GGUF file '/models/missing.gguf' (No such file or directory)", "llamacpp-gguf-missing")
        .meaning.failure,
    ).toBe("model file not found: /models/missing.gguf");
    expect(
      expectOnly("llama.cpp", "llama_model_load: error loading model: tensor 'blk.0.attn_q.weight' data is not within the file bounds", "llamacpp-load-failed")
        .meaning.failure,
    ).toBe("failed to load the model: tensor 'blk.0.attn_q.weight' data is not within the file bounds");
    expect(expectOnly("llama.cpp", "main: exiting due to model loading error", "llamacpp-load-failed").meaning.generic).toBe(true);
    const oom = expectOnly(
      "llama.cpp",
      "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 40960.00 MiB on device 1: cudaMalloc failed: out of memory",
      "llamacpp-cuda-alloc",
    );
    expect({ failure: oom.meaning.failure, gpu: oom.gpu }).toEqual({ failure: "CUDA out of memory allocating 40960.00 MiB on device 1", gpu: 1 });
  });

  it("the early HTTP listener is not its ready line (it answers 503 Loading model meanwhile)", () => {
    expectNothing("llama.cpp", "main: HTTP server is listening, hostname: 127.0.0.1, port: 8080, http threads: 15");
    expectNothing("llama.cpp", "srv  log_server_r: request: GET /health 127.0.0.1 503");
  });
});
