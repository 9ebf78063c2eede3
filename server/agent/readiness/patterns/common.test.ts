import { afterAll, describe, expect, it } from "vitest";
import { recognise } from "./index";
import { expectAllPatternsCovered, expectOnly, meaningOf } from "./testing";

describe("lines every engine can print", () => {
  afterAll(() => expectAllPatternsCovered("common"));

  it("the checkpoint-shard bar (vLLM and SGLang print the same one)", () => {
    expect(
      expectOnly("sglang", "Loading safetensors checkpoint shards:  12% Completed | 20/163 [00:17<02:03,  1.16it/s]", "checkpoint-shards").meaning.progress,
    ).toEqual({ done: 20, total: 163 });
  });

  it("CUDA errors other than out-of-memory, NCCL errors", () => {
    expect(expectOnly("sglang", "RuntimeError: CUDA error: no kernel image is available for execution on the device", "cuda-error").meaning.failure).toBe(
      "CUDA error: no kernel image is available for execution on the device",
    );
    expect(
      expectOnly(
        "vllm",
        "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
        "nccl-error",
      ).meaning.failure,
    ).toBe("NCCL error: unhandled cuda error");
    expectOnly("tgi", "RuntimeError: CUDA error: out of memory", "cuda-oom");
  });

  it("a traceback's start; its exception line is offered as a generic failure", () => {
    expect(expectOnly("vllm", "Traceback (most recent call last):", "traceback").meaning.traceback).toBe(true);
    const ex = meaningOf("vllm", "ValueError: Unrecognized configuration class <class 'transformers.Foo'>");
    expect(ex.map((r) => [r.id, r.meaning.failure, r.meaning.generic])).toEqual([
      ["exception", "ValueError: Unrecognized configuration class <class 'transformers.Foo'>", true],
    ]);
    expect(recognise("vllm", "KeyboardInterrupt")).toEqual([]);
    expect(recognise("vllm", '  File "/usr/lib/python3.12/site-packages/vllm/engine/core.py", line 586, in run_engine_core')).toEqual([]);
  });
});
