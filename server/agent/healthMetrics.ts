/**
 * /metrics series for GPU health (next to ./metrics.ts, which renders the rest): clock event
 * (throttle) reasons, ECC error counts, the unified-memory pool, and Xids seen this run. As
 * everywhere in /metrics, a value nvidia-smi did not report gives no series, never 0; a count
 * that is known to be zero (no Xid yet) is a series at 0.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { GpuFault } from "../contract/faults";
import type { GpuReading, GpuSample } from "../contract/types";
import { XID_CODES } from "./faults/xidCodes";
import { pciKey } from "./faults/xid";

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

/** nvidia-smi's `00000000:3B:00.0` as the driver prints it in an Xid (`0000:3b:00`); "" when unparsable. */
export function driverPci(pciBusId: string): string {
  const key = pciKey(pciBusId);
  if (key === null) return "";
  const [domain, bus, device] = key.split(":");
  return `${Number(domain).toString(16).padStart(4, "0")}:${bus}:${device}`;
}

/**
 * Xids seen this run, by GPU and code. Every GPU has a series at 0 for each code the agent knows
 * (./faults/xidCodes.ts) from the start, so `increase()` counts the first Xid too; a code
 * outside that table starts at its first message.
 */
export function registerFaultMetrics(registers: Registry[], faults: readonly GpuFault[], gpus: readonly Pick<GpuReading, "uuid" | "pciBusId">[] = []): void {
  const xids = new Counter({
    name: "gpudeck_gpu_xid_errors_total",
    help: "NVIDIA Xid messages in the kernel log since the agent started, by GPU (PCI address) and code",
    labelNames: ["pci", "uuid", "code"] as const,
    registers,
  });
  const pciOf = new Map(gpus.map((g) => [g.uuid, driverPci(g.pciBusId)]));
  for (const [uuid, pci] of pciOf) for (const code of XID_CODES.keys()) xids.inc({ pci, uuid, code: String(code) }, 0);
  for (const f of faults) xids.inc({ pci: (f.gpuUuid !== null && pciOf.get(f.gpuUuid)) || f.pci, uuid: f.gpuUuid ?? "", code: String(f.code) });
}
