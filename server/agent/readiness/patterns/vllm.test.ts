import { afterAll, describe, expect, it } from "vitest";
import { expectAllPatternsCovered, expectNothing, expectOnly, green, meaningOf } from "./testing";

// Samples written in vLLM's formats: V1 ("INFO 05-01 03:12:04 [file.py:123] …", worker prefixes
// "(VllmWorker rank=N pid=…)" / "(EngineCore_0 pid=…)" / "(Worker_TP3 pid=…)"), V0
// ("INFO 05-01 03:12:04 file.py:123] …"), with and without ANSI colour.
const V1 = (msg: string) => `INFO 05-01 03:12:04 [gpu_model_runner.py:1595] ${msg}`;
const V0 = (msg: string) => `INFO 11-04 17:20:31 model_runner.py:1008] ${msg}`;

describe("vLLM log lines", () => {
  afterAll(() => expectAllPatternsCovered("vllm"));

  it("the start of weight loading, V1 with a worker prefix and V0", () => {
    expect(expectOnly("vllm", `(VllmWorker rank=0 pid=4128) ${V1("Starting to load model /models/kimi-k2.5...")}`, "vllm-start-load").meaning.stage).toBe(
      "loading weights",
    );
    expect(
      expectOnly(
        "vllm",
        `(EngineCore_0 pid=4122) ${green("INFO")} 05-01 03:12:04 [gpu_model_runner.py:1595] Starting to load model Qwen/Qwen3-8B...`,
        "vllm-start-load",
      ).record.rank,
    ).toBeNull();
    expect(expectOnly("vllm", V0("Starting to load model meta-llama/Llama-3.1-8B-Instruct..."), "vllm-start-load").meaning.stage).toBe("loading weights");
  });

  it("the checkpoint-shard bar gives progress, also as \\r-separated tqdm updates in one entry", () => {
    const one = expectOnly(
      "vllm",
      "(VllmWorker rank=0 pid=4128) Loading safetensors checkpoint shards:  56% Completed | 5/9 [00:10<00:08,  2.05s/it]",
      "checkpoint-shards",
    );
    expect(one.meaning.progress).toEqual({ done: 5, total: 9 });
    const tqdm = meaningOf(
      "vllm",
      "Loading safetensors checkpoint shards:   0% Completed | 0/119 [00:00<?, ?it/s]\rLoading safetensors checkpoint shards:  31% Completed | 37/119 [00:42<01:33,  1.14s/it]\r",
    );
    expect(tqdm.map((r) => r.meaning.progress)).toEqual([
      { done: 0, total: 119 },
      { done: 37, total: 119 },
    ]);
    // .pt checkpoints, a bar glued to the next record, another rank's bar
    expect(expectOnly("vllm", "Loading pt checkpoint shards: 100% Completed | 4/4 [00:03<00:00,  1.21it/s]", "checkpoint-shards").meaning.progress).toEqual({
      done: 4,
      total: 4,
    });
    const glued = meaningOf(
      "vllm",
      "Loading safetensors checkpoint shards: 100% Completed | 9/9 [00:18<00:00,  2.01s/it]\n\r\n" + V1("Loading weights took 18.42 seconds"),
    );
    expect(glued.map((r) => r.id)).toEqual(["checkpoint-shards", "vllm-weights-took"]);
    expect(meaningOf("vllm", "(VllmWorker rank=3 pid=4131) Loading safetensors checkpoint shards:  56% Completed | 5/9 [00:10<00:08]")[0]!.record.rank).toBe(3);
  });

  it("durations vLLM reports for finished stages", () => {
    expect(expectOnly("vllm", `(VllmWorker rank=0 pid=4128) ${V1("Loading weights took 24.84 seconds")}`, "vllm-weights-took").meaning.timing).toEqual({
      stage: "loading weights",
      seconds: 24.84,
    });
    expect(expectOnly("vllm", V1("Model loading took 12.66 GiB memory and 31.66 s"), "vllm-model-loading-took").meaning.timing).toEqual({
      stage: "loading the model",
      seconds: 31.66,
    });
    expect(expectOnly("vllm", V1("Model loading took 71.4021 GiB and 85.019871 seconds"), "vllm-model-loading-took").meaning.timing?.seconds).toBe(85.019871);
    const v0 = expectOnly("vllm", V0("Loading model weights took 12.66 GB"), "vllm-model-loading-took");
    expect(v0.meaning).toEqual({ stage: "weights loaded" });
    expect(expectOnly("vllm", "INFO 05-01 03:13:41 [monitor.py:34] torch.compile takes 7.51 s in total", "vllm-compile-took").meaning.timing).toEqual({
      stage: "torch.compile",
      seconds: 7.51,
    });
    expect(
      expectOnly("vllm", "INFO 05-01 03:14:02 [gpu_model_runner.py:2048] Graph capturing finished in 17 secs, took 0.59 GiB", "vllm-graphs-took").meaning
        .timing,
    ).toEqual({
      stage: "capturing CUDA graphs",
      seconds: 17,
    });
    expect(
      expectOnly("vllm", "INFO 05-01 03:14:03 [core.py:171] init engine (profile, create kv cache, warmup model) took 34.11 seconds", "vllm-init-took").meaning
        .timing,
    ).toEqual({
      stage: "engine init",
      seconds: 34.11,
    });
  });

  it("torch.compile, KV-cache sizing and CUDA graphs", () => {
    expectOnly(
      "vllm",
      "INFO 05-01 03:13:01 [backends.py:462] Using cache directory: /root/.cache/vllm/torch_compile_cache/3f2a/rank_0_0 for vLLM's torch.compile",
      "vllm-compile",
    );
    expectOnly("vllm", "(VllmWorker rank=0 pid=4128) INFO 05-01 03:13:09 [backends.py:472] Dynamo bytecode transform time: 11.42 s", "vllm-compile");
    expectOnly("vllm", "INFO 05-01 03:13:20 [backends.py:161] Compiling a graph for dynamic shape takes 27.11 s", "vllm-compile");
    expect(expectOnly("vllm", "INFO 05-01 03:13:45 [kv_cache_utils.py:715] GPU KV cache size: 613,024 tokens", "vllm-kv-cache").meaning.stage).toBe(
      "allocating KV cache",
    );
    expectOnly("vllm", "INFO 05-01 03:13:44 [gpu_worker.py:227] Available KV cache memory: 41.20 GiB", "vllm-kv-cache");
    expectOnly("vllm", "INFO 11-04 17:21:02 distributed_gpu_executor.py:57] # GPU blocks: 27713, # CPU blocks: 2048", "vllm-kv-cache");
    expectOnly("vllm", "INFO 11-04 17:21:02 worker.py:232] Memory profiling takes 4.31 seconds", "vllm-kv-cache");
    expectOnly(
      "vllm",
      "INFO 11-04 17:21:05 model_runner.py:1402] Capturing cudagraphs for decoding. This may lead to unexpected consequences if the model is not static.",
      "vllm-graphs",
    );
    expectOnly(
      "vllm",
      "INFO 09-02 10:01:02 model_runner.py:1099] Capturing the model for CUDA graphs. This may lead to unexpected consequences",
      "vllm-graphs",
    );
    const bar = expectOnly(
      "vllm",
      "(VllmWorker rank=0 pid=4128) Capturing CUDA graph shapes:  49%|████▉     | 33/67 [00:10<00:10,  3.2it/s]",
      "vllm-graphs-bar",
    );
    expect(bar.meaning).toEqual({ stage: "capturing CUDA graphs", progress: { done: 33, total: 67 } });
    const newer = expectOnly(
      "vllm",
      "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 67/67 [00:21<00:00,  3.11it/s]",
      "vllm-graphs-bar",
    );
    expect(newer.meaning.progress).toEqual({ done: 67, total: 67 });
  });

  it("the API server, then its ready line", () => {
    expectOnly("vllm", "INFO 05-01 03:14:05 [api_server.py:1457] Starting vLLM API server 0 on http://0.0.0.0:8000", "vllm-api-server");
    expectOnly("vllm", `${green("INFO")}:     Started server process [4121]`, "vllm-api-server");
    expectOnly("vllm", "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)", "vllm-api-server");
    expect(expectOnly("vllm", `${green("INFO")}:     Application startup complete.`, "vllm-ready").meaning.ready).toBe(true);
  });

  it("fatal errors in vLLM's own words", () => {
    expect(
      expectOnly(
        "vllm",
        "ERROR 05-01 03:13:50 [core.py:586] ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
        "vllm-no-cache-memory",
      ).meaning.failure,
    ).toMatch(/KV cache blocks/);
    const free = expectOnly(
      "vllm",
      "ValueError: Free memory on device (17.36/79.19 GiB) on startup is less than desired GPU memory utilization (0.9, 71.27 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
      "vllm-free-memory",
    );
    expect(free.meaning.failure).toBe("only 17.36 of 79.19 GiB GPU memory was free at start, less than --gpu-memory-utilization 0.9 asks for (71.27 GiB)");
    expectOnly(
      "vllm",
      "Free memory on device cuda:3 (2.1/139.8 GiB) on startup is less than desired GPU memory utilization (0.95, 132.8 GiB).",
      "vllm-free-memory",
    );
    expect(
      expectOnly(
        "vllm",
        "ValueError: The model's max seq len (131072) is larger than the maximum number of tokens that can be stored in KV cache (61440). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
        "vllm-max-len",
      ).meaning.failure,
    ).toBe("the model's max seq len (131072) does not fit in the KV cache (61440 tokens)");
    expect(
      expectOnly(
        "vllm",
        "OSError: /models/llama-3.3-70b is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'",
        "vllm-model-not-found",
      ).meaning.failure,
    ).toBe("model not found: /models/llama-3.3-70b");
    expect(
      expectOnly("vllm", "FileNotFoundError: [Errno 2] No such file or directory: '/models/qwen3/config.json'", "vllm-model-not-found").meaning.failure,
    ).toBe("model not found: /models/qwen3/config.json");
    const init = expectOnly(
      "vllm",
      "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_0': 1}",
      "vllm-engine-init-failed",
    );
    expect(init.meaning.generic).toBe(true);
  });

  it("the CUDA out-of-memory error names the GPU, from the line or the worker's rank", () => {
    const oom = expectOnly(
      "vllm",
      "(VllmWorker rank=3 pid=4131) ERROR 05-01 03:13:50 [multiproc_executor.py:527] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB of which 1.06 GiB is free.",
      "cuda-oom",
    );
    expect({ gpu: oom.gpu, failure: oom.meaning.failure, context: oom.meaning.context }).toEqual({ gpu: 3, failure: "CUDA out of memory", context: true });
    expect(expectOnly("vllm", "(Worker_TP5 pid=4133) torch.cuda.OutOfMemoryError: CUDA out of memory.", "cuda-oom").gpu).toBe(5);
  });

  it("Ray that cannot place the workers' GPUs, the V1 KV-cache check, the wrapper line", () => {
    const wait = expectOnly(
      "vllm",
      "INFO 11-20 04:00:40 [ray_utils.py:345] Waiting for creating a placement group of specs for 30 seconds. specs=[{'GPU': 1.0, 'node:10.0.0.5': 0.001}, {'GPU': 1.0}]. Check `ray status` and `ray list nodes` to see if you have enough resources.",
      "ray-pg-wait",
    );
    expect(wait.meaning).toMatchObject({ stage: "waiting for GPUs (Ray placement group)", cause: expect.stringMatching(/2 GPUs asked.*waited 30 s$/) });
    expect(
      expectOnly(
        "vllm",
        "ValueError: Cannot provide a placement group of placement_group_specs=[{'GPU': 1.0}] within 1800 seconds. See `ray status`",
        "ray-pg-timeout",
      ).meaning.failure,
    ).toMatch(/1 GPU asked: \[\{'GPU': 1\.0\}\]\).*gave up after 1800 s/);
    expect(
      expectOnly(
        "vllm",
        "(autoscaler +12s) Warning: The following resource request cannot be scheduled right now: {'GPU': 1.0, 'CPU': 1.0}. This is likely due to all cluster resources being claimed by actors.",
        "ray-unschedulable",
      ).meaning.cause,
    ).toMatch(/asking \{'GPU': 1\.0, 'CPU': 1\.0\}/);
    expectOnly(
      "vllm",
      "ValueError: Current node has no GPU available. current_node_resource={'CPU': 64.0}. vLLM engine cannot start without GPU.",
      "ray-no-gpu",
    );
    expect(
      expectOnly(
        "vllm",
        "ValueError: To serve at least one request with the models's max seq len (262144), (24.00 GiB KV cache is needed, which is larger than the available KV cache memory (9.74 GiB). Based on the available memory, the estimated maximum model length is 106368.",
        "vllm-kv-max-len",
      ).meaning.failure,
    ).toMatch(/^the model's max seq len \(262144\) needs 24\.00 GiB of KV cache, more than the 9\.74 GiB left \(at most 106368 tokens/);
    expect(expectOnly("vllm", "RuntimeError: Engine core initialization failed. See root cause above.", "vllm-engine-init-failed").meaning.wrapper).toBe(true);
  });

  it("harmless lines that look alarming are not failures", () => {
    expectNothing(
      "vllm",
      "WARNING 05-01 03:12:05 [config.py:1306] Possibly too large swap space. 16.00 GiB out of the 62.00 GiB total CPU memory is allocated for the swap space.",
    );
    expectNothing(
      "vllm",
      "INFO 05-01 03:12:06 [gpu_worker.py:210] Free memory on device (78.2/79.19 GiB) on startup. Desired GPU memory utilization is (0.9, 71.27 GiB).",
    );
    expectNothing("vllm", 'INFO:     127.0.0.1:51234 - "GET /health HTTP/1.1" 200 OK');
    expectNothing("vllm", "ERROR 05-01 09:00:00 [serving_chat.py:201] Error in preprocessing prompt inputs");
  });
});
