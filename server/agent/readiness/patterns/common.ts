/**
 * Lines every engine can print: CUDA running out of memory, CUDA and NCCL errors, Python
 * tracebacks (whose last line, the exception, says what failed), and the tqdm bar of loading
 * safetensors checkpoint shards (vLLM and SGLang share it).
 */
import { progressOf, type LinePattern } from "./types";

export const SHARDS = "loading weights";

/** vLLM's logger header before a traceback's lines ("ERROR 08-05 02:30:21 [core.py:718] "), optional. */
export const LOG_HEADER = "(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)? \\[[^\\]]+\\]\\s+)?";

export const COMMON_PATTERNS: LinePattern[] = [
  {
    id: "checkpoint-shards",
    // "Loading safetensors checkpoint shards:  56% Completed | 5/9 [00:10<00:08,  2.05s/it]"
    re: /Loading (?:safetensors|pt) checkpoint shards:\s*(\d+)% Completed \|\s*(\d+)\/(\d+)/,
    meaning: (m) => ({ stage: SHARDS, progress: progressOf(m[2], m[3]) }),
  },
  {
    id: "cuda-oom",
    // "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB …"
    re: /(?:torch\.(?:cuda\.)?OutOfMemoryError|CUDA out of memory|CUDA error: out of memory|cudaMalloc failed: out of memory)/,
    meaning: () => ({ failure: "CUDA out of memory", context: true }),
  },
  {
    id: "cuda-error",
    // "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    re: /CUDA error: (?!out of memory)([^.\n]{3,160})/,
    meaning: (m) => ({ failure: `CUDA error: ${m[1]!.trim()}`, context: true }),
  },
  {
    id: "nccl-error",
    // "torch.distributed.DistBackendError: NCCL error in: …, unhandled cuda error (run with NCCL_DEBUG=INFO for details)"
    re: /NCCL error(?: in: [^,]*)?,?\s*([^(\n]{0,120})/,
    meaning: (m) => ({ failure: `NCCL error${m[1]?.trim() ? `: ${m[1].trim()}` : ""}`, context: true }),
  },
  {
    id: "traceback",
    // bare (stderr) or through vLLM's logger: "ERROR 08-05 02:30:21 [core.py:718] Traceback (most recent call last):"
    re: new RegExp(`^${LOG_HEADER}Traceback \\(most recent call last\\):`),
    meaning: () => ({ traceback: true }),
  },
];

/**
 * The exception line that ends a traceback ("RuntimeError: Engine core initialization failed. See
 * root cause above."). Only counts right after a traceback (see the tracker): on its own such a
 * line can be harmless.
 */
export const EXCEPTION_LINE = new RegExp(`^${LOG_HEADER}(?:[A-Za-z_][\\w]*\\.)*([A-Z]\\w*(?:Error|Exception))(?::\\s*(.{0,240}))?$`);
