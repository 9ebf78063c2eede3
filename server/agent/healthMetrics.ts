/**
 * /metrics series for GPU health (next to ./metrics.ts, which renders the rest): clock event
 * (throttle) reasons, ECC error counts, the unified-memory pool, and Xids seen this run. As
 * everywhere in /metrics, a value nvidia-smi did not report gives no series, never 0.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { GpuFault } from "../contract/faults";
import type { GpuSample } from "../contract/types";

const MIB = 1024 * 1024;

export function registerHealthMetrics(registers: Registry[], sample: GpuSample): void {
  const throttle = new Gauge({
    name: "gpudeck_gpu_clocks_event_reason",
    help: "1 for each reason nvidia-smi gives for holding the GPU's clocks down (clocks_event_reasons.active)",
    labelNames: ["uuid", "reason"] as const,
    registers,
  });
  const ecc = new Gauge({
    name: "gpudeck_gpu_ecc_errors_volatile",
    help: "ECC errors since the driver loaded (ecc.errors.*.volatile.total)",
    labelNames: ["uuid", "type"] as const,
    registers,
  });
  for (const g of sample.gpus) {
    for (const reason of g.throttleReasons ?? []) throttle.set({ uuid: g.uuid, reason }, 1);
    if (typeof g.eccCorrectedVolatile === "number") ecc.set({ uuid: g.uuid, type: "corrected" }, g.eccCorrectedVolatile);
    if (typeof g.eccUncorrectedVolatile === "number") ecc.set({ uuid: g.uuid, type: "uncorrected" }, g.eccUncorrectedVolatile);
  }
  if (sample.memoryPool) {
    const pool = new Gauge({
      name: "gpudeck_host_memory_pool_bytes",
      help: "Unified-memory GPUs: the host memory they share (/proc/meminfo MemTotal, MemAvailable)",
      labelNames: ["kind"] as const,
      registers,
    });
    pool.set({ kind: "total" }, sample.memoryPool.totalMiB * MIB);
    pool.set({ kind: "available" }, sample.memoryPool.availableMiB * MIB);
  }
}

export function registerFaultMetrics(registers: Registry[], faults: readonly GpuFault[]): void {
  const xids = new Counter({
    name: "gpudeck_gpu_xid_errors_total",
    help: "NVIDIA Xid messages in the kernel log since the agent started, by GPU (PCI address) and code",
    labelNames: ["pci", "uuid", "code"] as const,
    registers,
  });
  for (const f of faults) xids.inc({ pci: f.pci, uuid: f.gpuUuid ?? "", code: String(f.code) });
}
