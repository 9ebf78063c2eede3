import { describe, expect, it } from "vitest";
import type { JournalEntry } from "../../contract/types";
import { ReadinessTracker, type ProbeOutcome } from "./tracker";

const T0 = Date.UTC(2025, 4, 1, 3, 12, 0);
const at = (s: number) => T0 + s * 1000;
let seq = 0;
const line = (s: number, message: string, pid = 4128): JournalEntry => ({
  cursor: `c${++seq}`,
  atUsec: at(s) * 1000,
  unit: "vllm-a.service",
  priority: 6,
  pid,
  message,
});
const refused: ProbeOutcome = { probe: { url: "http://127.0.0.1:8000/health", ok: false, status: null, atMs: 0, detail: "connection refused" } };
const ok = (models?: string[]): ProbeOutcome => ({ probe: { url: "http://127.0.0.1:8000/health", ok: true, status: 200, atMs: 0 }, models });
const status = (code: number, detail?: string, loading = false): ProbeOutcome => ({
  probe: { url: "http://127.0.0.1:8080/health", ok: false, status: code, atMs: 0, detail },
  loading,
});

function started(engine: "vllm" | "llama.cpp" | "ollama" | "sglang" = "vllm", probes = true) {
  const t = new ReadinessTracker(engine, probes, at(0));
  t.begin(at(0), true);
  return t;
}

describe("ReadinessTracker", () => {
  it("a start we saw: loading from its first second, stages and progress from the log, serving when the probe passes", () => {
    const t = started();
    expect(t.get()).toMatchObject({ state: "loading", stage: "starting", sinceMs: at(0), probe: null });
    t.probe(refused, at(2));
    expect(t.get()).toMatchObject({ state: "loading", stage: "starting", probe: { ok: false, detail: "connection refused" } });
    t.line(line(5, "(VllmWorker rank=0 pid=4128) INFO 05-01 03:12:05 [gpu_model_runner.py:1595] Starting to load model /models/kimi-k2.5..."));
    t.line(line(20, "(VllmWorker rank=0 pid=4128) Loading safetensors checkpoint shards:  31% Completed | 37/119 [00:15<00:33]"));
    expect(t.get()).toMatchObject({ state: "loading", stage: "loading weights", progress: { done: 37, total: 119 }, stageSinceMs: at(5), sinceMs: at(0) });
    // another rank's bar does not move the progress back and forth
    t.line(line(21, "(VllmWorker rank=5 pid=4133) Loading safetensors checkpoint shards:  28% Completed | 33/119 [00:15<00:33]"));
    expect(t.get().progress).toEqual({ done: 37, total: 119 });
    t.line(line(60, "(VllmWorker rank=0 pid=4128) INFO 05-01 03:13:00 [default_loader.py:272] Loading weights took 55.10 seconds"));
    t.line(line(90, "(VllmWorker rank=0 pid=4128) Capturing CUDA graph shapes:  49%|████▉     | 33/67 [00:10<00:10,  3.2it/s]"));
    expect(t.get()).toMatchObject({
      stage: "capturing CUDA graphs",
      progress: { done: 33, total: 67 },
      stageSinceMs: at(90),
      timings: [{ stage: "loading weights", seconds: 55.1 }],
    });
    expect(t.get().line?.text).toMatch(/^Capturing CUDA graph shapes/);
    expect(t.line(line(120, "INFO:     Application startup complete."))).toBe(true); // probe now
    expect(t.get().state).toBe("loading"); // a ready line is not serving: the probe decides
    t.probe(ok(["/models/kimi-k2.5"]), at(121));
    expect(t.get()).toMatchObject({ state: "serving", stage: null, progress: null, reason: null, sinceMs: at(121), models: ["/models/kimi-k2.5"] });
  });

  it("lines before the run, systemd's own lines and lines of a unit without an engine are ignored", () => {
    const t = started();
    t.line(line(-5, "Loading safetensors checkpoint shards:  56% Completed | 5/9"));
    t.line(line(3, "Loading safetensors checkpoint shards:  56% Completed | 5/9", 1));
    expect(t.get().stage).toBe("starting");
    const none = new ReadinessTracker(null, true, at(0));
    none.begin(at(0), true);
    none.line(line(3, "Loading safetensors checkpoint shards:  56% Completed | 5/9"));
    expect(none.get()).toMatchObject({ state: "unknown", engine: null, stage: null });
  });

  it("llama.cpp answers 503 Loading model while it loads", () => {
    const t = started("llama.cpp");
    t.probe(status(503, "Loading model", true), at(1));
    expect(t.get()).toMatchObject({ state: "loading", stage: "loading model", probe: { status: 503, detail: "Loading model" } });
    t.probe({ probe: { url: "http://127.0.0.1:8080/health", ok: true, status: 200, atMs: 0 } }, at(9));
    expect(t.get().state).toBe("serving");
  });

  it("serving → not serving only after two failed probes in a row; back when it answers", () => {
    const t = started();
    t.probe(ok(), at(10));
    t.probe(status(503, "Service Unavailable"), at(20));
    expect(t.get().state).toBe("serving");
    t.probe(ok(), at(30));
    t.probe(status(503), at(40));
    t.probe({ probe: { url: "http://127.0.0.1:8000/health", ok: false, status: null, atMs: 0, detail: "no answer within 2 s" } }, at(50));
    expect(t.get()).toMatchObject({ state: "not-serving", sinceMs: at(50), reason: "/health: no answer within 2 s" });
    t.probe(ok(), at(60));
    expect(t.get()).toMatchObject({ state: "serving", sinceMs: at(60), reason: null });
  });

  it("a fatal line while loading: failed, with the stage and the GPU; the generic line after it does not replace it", () => {
    const t = started();
    t.line(line(30, "INFO 05-01 03:12:30 [kv_cache_utils.py:715] Available KV cache memory: 12.00 GiB"));
    t.line(
      line(
        31,
        "(VllmWorker rank=3 pid=4131) ERROR 05-01 03:12:31 [multiproc_executor.py:527] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB",
      ),
    );
    t.line(line(32, "RuntimeError: Engine core initialization failed. See root cause above."));
    expect(t.get()).toMatchObject({
      state: "failed",
      stage: "allocating KV cache",
      reason: "CUDA out of memory while allocating the KV cache on GPU 3",
      sinceMs: at(31),
    });
    expect(t.get().line?.text).toMatch(/^ERROR .*torch\.OutOfMemoryError/);
  });

  it("an error line that was not fatal: the probe passing wins", () => {
    const t = started();
    t.line(line(5, "RuntimeError: CUDA error: an illegal memory access was encountered"));
    expect(t.get().state).toBe("failed");
    t.probe(ok(), at(30));
    expect(t.get()).toMatchObject({ state: "serving", reason: null });
  });

  it("a fatal line while serving is judged by the next probes, which then name it", () => {
    const t = started();
    t.probe(ok(), at(10));
    t.line(line(100, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacity of 79.19 GiB"));
    expect(t.get().state).toBe("serving");
    t.probe(refused, at(110));
    t.probe(refused, at(120));
    expect(t.get()).toMatchObject({ state: "not-serving", reason: "CUDA out of memory on GPU 0" });
  });

  it("Ollama on the CPU serves, with the warning shown (never failed while it answers)", () => {
    const t = started("ollama");
    t.line(line(1, 'time=2025-05-01T03:12:01Z level=INFO source=types.go:130 msg="inference compute" id=0 library=cpu variant="" total="62.5 GiB"'));
    t.probe({ probe: { url: "http://127.0.0.1:11434/api/version", ok: true, status: 200, atMs: 0 } }, at(2));
    expect(t.get()).toMatchObject({ state: "serving", reason: null, warning: expect.stringMatching(/no GPU .*library=cpu/) });
  });

  it("an exception line counts only at the end of a traceback", () => {
    const t = started("sglang");
    t.line(line(1, "ValueError: something harmless was logged"));
    expect(t.get().state).toBe("loading");
    t.line(line(2, "Traceback (most recent call last):"));
    t.line(line(2, '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2201, in run_scheduler_process'));
    t.line(line(2, "AssertionError: The model path /models/x does not exist"));
    expect(t.get()).toMatchObject({ state: "failed", reason: "AssertionError: The model path /models/x does not exist" });
  });

  it("a run the agent found running: unknown until a line or a probe says more", () => {
    const a = new ReadinessTracker("vllm", true, at(0));
    a.begin(at(-3600), false);
    expect(a.get()).toMatchObject({ state: "unknown", engine: "vllm" });
    a.probe(refused, at(1));
    expect(a.get()).toMatchObject({ state: "not-serving", reason: "/health: connection refused" });
    const b = new ReadinessTracker("vllm", true, at(0));
    b.begin(at(-60), false);
    b.line(line(-30, "Loading safetensors checkpoint shards:  10% Completed | 12/119"));
    expect(b.get()).toMatchObject({ state: "loading", stage: "loading weights", sinceMs: at(-60) });
    b.probe(refused, at(1));
    expect(b.get().state).toBe("loading");
  });

  it("the end of a run: inactive is unknown; a failed unit keeps its failure, also one read just after the end", () => {
    const t = started();
    t.probe(ok(), at(10));
    t.end(at(20), "inactive");
    expect(t.get()).toMatchObject({ state: "unknown", probe: null, models: [], sinceMs: at(20) });
    t.probe(ok(), at(21));
    expect(t.get().state).toBe("unknown");

    const f = started();
    f.line(line(10, "(VllmWorker rank=0 pid=4128) Capturing CUDA graph shapes:  10%|█         | 7/67 [00:02<00:20]"));
    f.end(at(12), "failed"); // D-Bus is faster than the journal: the error comes in after the end
    f.line(line(11, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 2 has a total capacity of 79.19 GiB"));
    expect(f.get()).toMatchObject({ state: "failed", stage: "capturing CUDA graphs", reason: "CUDA out of memory while capturing CUDA graphs on GPU 2" });
    f.end(at(13), "activating"); // waiting to restart: still explains it
    expect(f.get().state).toBe("failed");
    f.end(at(14), "inactive");
    expect(f.get().state).toBe("unknown");
  });

  it("with probes off, the engine's ready line means serving", () => {
    const t = started("vllm", false);
    t.line(line(30, "INFO:     Application startup complete."));
    expect(t.get()).toMatchObject({ state: "serving", sinceMs: at(30) });
  });

  it("for self-heal: whether this run served, and its failed probes in a row since the first (a passing probe resets them; a new run forgets both)", () => {
    const t = started();
    const failed = (s: number): ProbeOutcome => ({ probe: { ...refused.probe, status: 503, detail: undefined, atMs: at(s) } });
    t.probe(failed(1), at(1));
    expect(t.servedInRun()).toBe(false);
    t.probe(ok(), at(10));
    expect(t.servedInRun()).toBe(true);
    expect(t.probeFailures()).toBeNull();
    t.probe(failed(20), at(20));
    t.probe(failed(22), at(22));
    t.probe(failed(24), at(24));
    expect(t.get().state).toBe("not-serving");
    expect(t.probeFailures()).toEqual({ count: 3, sinceMs: at(20) });
    t.probe(ok(), at(26));
    expect(t.probeFailures()).toBeNull();
    t.end(at(30), "inactive");
    expect(t.servedInRun()).toBe(false);
    t.begin(at(40), true);
    expect(t.servedInRun()).toBe(false);
    expect(t.probeFailures()).toBeNull();
  });
});
