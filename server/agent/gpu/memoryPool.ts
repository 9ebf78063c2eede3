/**
 * Unified-memory GPUs (GB10 / DGX Spark): nvidia-smi prints memory.used and memory.total as
 * [N/A] because the GPU allocates from the host's memory; per-process used_memory is still
 * listed. Here the host's MemTotal/MemAvailable (/proc/meminfo) is read and attached to the
 * sample as its `memoryPool`, so the UI can show the processes' memory against the real pool
 * and a GPU-aware restart can wait for MemAvailable to recover. A GPU counts as unified when it
 * reports neither memory.used nor memory.total but is otherwise listed.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { GpuRawSample, GpuReading, GpuSample } from "../../contract/types";
import type { HostMemory } from "../adapter";
import type { SampleAttributor } from "../hub/gpuBuffer";

/** `/proc/meminfo` text → MiB, or null when MemTotal or MemAvailable is missing. */
export function parseMeminfo(text: string): HostMemory | null {
  const kib = (key: string): number | null => {
    const m = new RegExp(`^${key}:\\s+(\\d+)\\s*kB\\s*$`, "m").exec(text);
    return m ? Number(m[1]) : null;
  };
  const total = kib("MemTotal");
  const available = kib("MemAvailable");
  if (total === null || available === null) return null;
  return { totalMiB: Math.round(total / 1024), availableMiB: Math.round(available / 1024) };
}

/** Reads `<procRoot>/meminfo`; null when it cannot. */
export function meminfoReader(procRoot = "/proc"): () => Promise<HostMemory | null> {
  return async () => {
    try {
      return parseMeminfo(await readFile(path.join(procRoot, "meminfo"), "utf8"));
    } catch {
      return null;
    }
  };
}

export function isUnifiedMemoryGpu(g: GpuReading): boolean {
  return g.memoryTotalMiB === null && g.memoryUsedMiB === null;
}

/** Wraps an attributor: samples with a unified-memory GPU get the host's memory as `memoryPool`. */
export class MemoryPoolAttributor implements SampleAttributor {
  constructor(
    private readonly inner: SampleAttributor,
    private readonly meminfo: (() => Promise<HostMemory | null>) | undefined,
  ) {}

  async attribute(raw: GpuRawSample): Promise<GpuSample> {
    const sample = await this.inner.attribute(raw);
    if (!this.meminfo || !raw.gpus.some(isUnifiedMemoryGpu)) return sample;
    const host = await this.meminfo();
    return host ? { ...sample, memoryPool: { ...host, unified: true } } : sample;
  }
}
