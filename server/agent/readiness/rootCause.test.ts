/**
 * Engine failures named by their root cause (issue 24): whole start-up logs in the engines' real
 * formats (journald splits stderr into one entry per line; worker prefixes and vLLM's logger
 * headers as printed), read by the tracker as the agent reads them.
 */
import { describe, expect, it } from "vitest";
import type { JournalEntry } from "../../contract/types";
import { ReadinessTracker } from "./tracker";

const T0 = Date.UTC(2026, 10, 20, 4, 0, 0);
const at = (s: number) => T0 + s * 1000;
let seq = 0;

/** A log as lines "+SECONDS text" (pid 1 for systemd's own lines: "+SECONDS [1] text"). */
function feed(t: ReadinessTracker, log: string): void {
  for (const raw of log.trim().split("\n")) {
    const m = /^\+(\d+(?:\.\d+)?) (?:\[(\d+)\] )?(.*)$/.exec(raw.trim());
    if (!m) throw new Error(`bad log line: ${raw}`);
    const e: JournalEntry = {
      cursor: `c${++seq}`,
      atUsec: at(Number(m[1])) * 1000,
      unit: "vllm-a.service",
      priority: 6,
      pid: m[2] ? Number(m[2]) : 2100,
      message: m[3]!,
    };
    t.line(e);
  }
}

function started(engine: "vllm" | "ollama" = "vllm") {
  const t = new ReadinessTracker(engine, true, at(0));
  t.begin(at(0), true);
  return t;
}

const PG_WAIT = (s: number) =>
  `+${s} (APIServer pid=2100) INFO 11-20 04:0${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")} [ray_utils.py:345] Waiting for creating a placement group of specs for ${s - 10} seconds. specs=[{'GPU': 1.0, 'node:10.0.0.5': 0.001}, {'GPU': 1.0}, {'GPU': 1.0}, {'GPU': 1.0}]. Check \`ray status\` and \`ray list nodes\` to see if you have enough resources, and make sure the IP addresses used by ray cluster are the same as VLLM_HOST_IP environment variable specified in each node if you are running on a multi-node.`;

describe("root causes of start-up failures", () => {
  it("a Ray placement group that cannot be placed, then stopped: the placement group and its GPUs, not the CancelledError", () => {
    const t = started();
    feed(
      t,
      `
+2 (APIServer pid=2100) INFO 11-20 04:00:02 [__init__.py:244] Automatically detected platform cuda.
+6 (APIServer pid=2100) INFO 11-20 04:00:06 [worker.py:1879] Started a local Ray instance. View the dashboard at http://127.0.0.1:8265
+8 (APIServer pid=2100) INFO 11-20 04:00:08 [ray_distributed_executor.py:149] use_ray_spmd_worker: True
${PG_WAIT(20)}
+25 (autoscaler +12s) Warning: The following resource request cannot be scheduled right now: {'GPU': 1.0}. This is likely due to all cluster resources being claimed by actors. Consider creating fewer actors or adding more nodes to this Ray cluster.
${PG_WAIT(40)}
`,
    );
    expect(t.get()).toMatchObject({ state: "loading", stage: "waiting for GPUs (Ray placement group)" });
    // systemctl stop: SIGTERM, the wait is cancelled, the process exits 1: the unit fails
    t.end(at(61), "failed");
    feed(
      t,
      `
+60 [1] vllm-a.service: Main process exited, code=exited, status=1/FAILURE
+60 (APIServer pid=2100) Traceback (most recent call last):
+60 (APIServer pid=2100)   File "/usr/lib/python3.12/asyncio/runners.py", line 118, in run
+60 (APIServer pid=2100)     return self._loop.run_until_complete(task)
+60 (APIServer pid=2100)   File "/opt/vllm/lib/python3.12/site-packages/vllm/executor/ray_utils.py", line 300, in _wait_until_pg_ready
+60 (APIServer pid=2100)     ready, _ = ray.wait([placement_group.ready()], timeout=wait_interval)
+60 (APIServer pid=2100) asyncio.exceptions.CancelledError
`,
    );
    const r = t.get();
    expect(r.state).toBe("failed");
    expect(r.reason).toMatch(/^Ray cannot (place the placement group|schedule a worker)/);
    expect(r.reason).not.toMatch(/CancelledError/);
    expect(r.stage).toBe("waiting for GPUs (Ray placement group)");
  });

  it("the placement group given up on by vLLM itself: the GPUs it asked for", () => {
    const t = started();
    feed(
      t,
      `
${PG_WAIT(20)}
+1810 (APIServer pid=2100) Traceback (most recent call last):
+1810 (APIServer pid=2100)   File "/opt/vllm/lib/python3.12/site-packages/vllm/executor/ray_utils.py", line 310, in _wait_until_pg_ready
+1810 (APIServer pid=2100) ValueError: Cannot provide a placement group of placement_group_specs=[{'GPU': 1.0, 'node:10.0.0.5': 0.001}, {'GPU': 1.0}, {'GPU': 1.0}, {'GPU': 1.0}] within 1800 seconds. See \`ray status\` and \`ray list nodes\` to make sure the cluster has enough resources.
`,
    );
    expect(t.get()).toMatchObject({ state: "failed", reason: expect.stringMatching(/4 GPUs asked: .*gave up after 1800 s/) });
  });

  it("a traceback ending in 'Engine core initialization failed': the exception above it (the KV cache not fitting max_model_len)", () => {
    const t = started();
    feed(
      t,
      `
+5 (EngineCore_0 pid=2317) INFO 11-20 04:00:05 [gpu_model_runner.py:1595] Starting to load model /models/qwen3-32b...
+40 (EngineCore_0 pid=2317) INFO 11-20 04:00:40 [gpu_model_runner.py:1624] Model loading took 61.03 GiB and 34.12 seconds
+52 (EngineCore_0 pid=2317) INFO 11-20 04:00:52 [gpu_worker.py:227] Available KV cache memory: 9.74 GiB
+52 (EngineCore_0 pid=2317) ERROR 11-20 04:00:52 [core.py:718] EngineCore failed to start.
+52 (EngineCore_0 pid=2317) ERROR 11-20 04:00:52 [core.py:718] Traceback (most recent call last):
+52 (EngineCore_0 pid=2317) ERROR 11-20 04:00:52 [core.py:718]   File "/opt/vllm/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 709, in run_engine_core
+52 (EngineCore_0 pid=2317) ERROR 11-20 04:00:52 [core.py:718]     engine_core = EngineCoreProc(*args, **kwargs)
+52 (EngineCore_0 pid=2317) ERROR 11-20 04:00:52 [core.py:718]   File "/opt/vllm/lib/python3.12/site-packages/vllm/v1/core/kv_cache_utils.py", line 613, in check_enough_kv_cache_memory
+52 (EngineCore_0 pid=2317) ERROR 11-20 04:00:52 [core.py:718]     raise ValueError(
+52 (EngineCore_0 pid=2317) ERROR 11-20 04:00:52 [core.py:718] ValueError: To serve at least one request with the models's max seq len (262144), (24.00 GiB KV cache is needed, which is larger than the available KV cache memory (9.74 GiB). Based on the available memory, the estimated maximum model length is 106368. Try increasing \`gpu_memory_utilization\` or decreasing \`max_model_len\` when initializing the engine.
+53 (EngineCore_0 pid=2317) Process EngineCore_0:
+53 (APIServer pid=2100) Traceback (most recent call last):
+53 (APIServer pid=2100)   File "/opt/vllm/bin/vllm", line 10, in <module>
+53 (APIServer pid=2100)     sys.exit(main())
+53 (APIServer pid=2100)   File "/opt/vllm/lib/python3.12/site-packages/vllm/v1/engine/utils.py", line 697, in wait_for_engine_startup
+53 (APIServer pid=2100)     raise RuntimeError("Engine core initialization failed. "
+53 (APIServer pid=2100) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}
`,
    );
    expect(t.get()).toMatchObject({
      state: "failed",
      reason:
        "the model's max seq len (262144) needs 24.00 GiB of KV cache, more than the 9.74 GiB left (at most 106368 tokens fit: lower --max-model-len or raise --gpu-memory-utilization)",
    });
    // gpudeck's own sentence: nothing in it is quoted from the log
    expect(t.get().reasonQuote ?? null).toBeNull();
  });

  it("a wrapper whose cause is an exception nothing specific knows: that exception is quoted", () => {
    const t = started();
    feed(
      t,
      `
+5 (EngineCore_0 pid=2317) ERROR 11-20 04:00:05 [core.py:718] Traceback (most recent call last):
+5 (EngineCore_0 pid=2317) ERROR 11-20 04:00:05 [core.py:718]   File "/opt/vllm/lib/python3.12/site-packages/vllm/model_executor/models/registry.py", line 421, in _raise_for_unsupported
+5 (EngineCore_0 pid=2317) ERROR 11-20 04:00:05 [core.py:718] ValueError: Model architectures ['Qwen9ForCausalLM'] are not supported for now.
+6 (APIServer pid=2100) Traceback (most recent call last):
+6 (APIServer pid=2100) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_0': 1}
`,
    );
    expect(t.get()).toMatchObject({
      state: "failed",
      reason: "ValueError: Model architectures ['Qwen9ForCausalLM'] are not supported for now.",
      // the log's own words, which the panel hides from callers without the journal permission
      reasonQuote: "Model architectures ['Qwen9ForCausalLM'] are not supported for now.",
    });
  });

  it("an engine that dies while loading with no error line: failed in its stage, with the signal", () => {
    const t = started();
    feed(
      t,
      `
+5 (VllmWorker rank=0 pid=4128) INFO 11-20 04:00:05 [gpu_model_runner.py:1595] Starting to load model /models/llama-3.3-70b...
+20 (VllmWorker rank=0 pid=4128) Loading safetensors checkpoint shards:  31% Completed | 9/30 [00:15<00:33,  1.61s/it]
`,
    );
    t.end(at(31), "failed");
    expect(t.get()).toMatchObject({
      state: "failed",
      stage: "loading weights",
      reason: 'the engine exited in the stage "loading weights" without logging an error',
    });
    feed(t, `+31 [1] vllm-a.service: Main process exited, code=killed, status=9/KILL`);
    expect(t.get()).toMatchObject({
      state: "failed",
      reason: 'the engine exited in the stage "loading weights" (killed by signal 9/KILL) without logging an error',
    });
    // the error it did log, read late, still wins
    feed(t, `+30 (VllmWorker rank=0 pid=4128) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.`);
    expect(t.get().reason).toBe("CUDA out of memory while loading weights on GPU 0");
  });

  it("a normal stop of a loading engine is not a death", () => {
    const t = started();
    feed(t, `+5 (VllmWorker rank=0 pid=4128) INFO 11-20 04:00:05 [gpu_model_runner.py:1595] Starting to load model /models/x...`);
    t.end(at(9), "deactivating");
    t.end(at(10), "inactive");
    expect(t.get().state).toBe("unknown");
  });

  it("Ollama without a GPU serves on the CPU: serving, with the warning", () => {
    const t = started("ollama");
    feed(
      t,
      `
+1 time=2026-11-20T04:00:01.201Z level=INFO source=routes.go:1297 msg="Listening on 127.0.0.1:11434 (version 0.9.2)"
+1 time=2026-11-20T04:00:01.400Z level=INFO source=gpu.go:377 msg="no compatible GPUs were discovered"
+1 time=2026-11-20T04:00:01.401Z level=INFO source=types.go:130 msg="inference compute" id=0 library=cpu variant="" compute="" driver=0.0 name="" total="62.5 GiB" available="58.0 GiB"
`,
    );
    t.probe({ probe: { url: "http://127.0.0.1:11434/api/version", ok: true, status: 200, atMs: at(2) } }, at(2));
    expect(t.get()).toMatchObject({ state: "serving", reason: null, warning: expect.stringMatching(/^Ollama found no GPU and runs models on the CPU/) });
    t.probe({ probe: { url: "http://127.0.0.1:11434/api/version", ok: true, status: 200, atMs: at(12) } }, at(12));
    expect(t.get().state).toBe("serving");
  });
});
