/**
 * The agent's Prometheus /metrics, rendered from current state with prom-client.
 *
 * Each render uses its own Registry (never prom-client's global default one), so series of
 * GPUs, processes and units that went away vanish at once instead of lingering with their
 * last value. A value that is not a number (null) gives no series, never 0; GPU series are
 * only exported while telemetry is fresh, so a stale sample is not passed off as current.
 */
import { Counter, Gauge, Registry } from "prom-client";
import type { BackendStatus, GpuSample, UnitSummary } from "../contract/types";
import type { GpuFault } from "../contract/faults";
import { registerFaultMetrics, registerHealthMetrics } from "./healthMetrics";
import { registerReadinessMetrics, type ReadinessExport } from "./readiness/metricsExport";

export interface MetricsInput {
  /** the latest attributed GPU sample, or null when there is none */
  sample: GpuSample | null;
  /** GPU telemetry status (nvidia-smi) */
  telemetry: BackendStatus;
  units: UnitSummary[];
  /** systemd connection status; gives gpudeck_systemd_up when present */
  systemd?: BackendStatus;
  /** open events.watch streams (a panel holds one per agent, whatever its number of viewers) */
  eventStreams?: number;
  /** Xids seen this run (gpudeck_gpu_xid_errors_total) */
  faults?: readonly GpuFault[];
  /** engines' readiness and scraped metrics per unit (gpudeck_unit_readiness, gpudeck_engine_*) */
  engines?: readonly ReadinessExport[];
}

const MIB = 1024 * 1024;

/** Content-Type of the text that renderMetrics returns. */
export const METRICS_CONTENT_TYPE = new Registry().contentType;

export async function renderMetrics(input: MetricsInput): Promise<string> {
  const registry = new Registry();
  const registers = [registry];
  const gpuLabels = ["uuid", "index", "name"] as const;

  const memUsed = new Gauge({
    name: "gpudeck_gpu_memory_used_bytes",
    help: "GPU memory allocated by active contexts (nvidia-smi memory.used)",
    labelNames: gpuLabels,
    registers,
  });
  const memTotal = new Gauge({
    name: "gpudeck_gpu_memory_total_bytes",
    help: "Total GPU memory (nvidia-smi memory.total)",
    labelNames: gpuLabels,
    registers,
  });
  const util = new Gauge({
    name: "gpudeck_gpu_utilization_ratio",
    help: "Fraction of the sample period a kernel ran on the GPU (nvidia-smi utilization.gpu / 100)",
    labelNames: gpuLabels,
    registers,
  });
  const temp = new Gauge({
    name: "gpudeck_gpu_temperature_celsius",
    help: "GPU core temperature",
    labelNames: gpuLabels,
    registers,
  });
  const power = new Gauge({
    name: "gpudeck_gpu_power_watts",
    help: "GPU power draw",
    labelNames: gpuLabels,
    registers,
  });
  const powerLimit = new Gauge({ name: "gpudeck_gpu_power_limit_watts", help: "GPU power limit (power.limit)", labelNames: gpuLabels, registers });
  const memUtil = new Gauge({
    name: "gpudeck_gpu_memory_utilization_ratio",
    help: "GPU memory controller busy time (utilization.memory), 0–1",
    labelNames: gpuLabels,
    registers,
  });
  const smClock = new Gauge({ name: "gpudeck_gpu_sm_clock_hertz", help: "GPU SM clock now (clocks.sm)", labelNames: gpuLabels, registers });
  const smClockMax = new Gauge({ name: "gpudeck_gpu_sm_clock_max_hertz", help: "GPU SM clock maximum (clocks.max.sm)", labelNames: gpuLabels, registers });
  const procMem = new Gauge({
    name: "gpudeck_gpu_process_memory_bytes",
    help: "GPU memory held by a process; kind=exited: by a process that no longer exists (draining)",
    labelNames: ["uuid", "pid", "unit", "process", "kind"] as const,
    registers,
  });
  const unattributed = new Gauge({
    name: "gpudeck_gpu_unattributed_memory_bytes",
    help: "GPU memory used but not explained by any listed or recently exited process",
    labelNames: ["uuid"] as const,
    registers,
  });
  const up = new Gauge({
    name: "gpudeck_gpu_telemetry_up",
    help: "1 when GPU telemetry is fresh, 0 when stale, failing or disabled",
    registers,
  });
  const unitState = new Gauge({
    name: "gpudeck_unit_state",
    help: "1 for the unit's current ActiveState/SubState pair",
    labelNames: ["unit", "active_state", "sub_state"] as const,
    registers,
  });
  const restarts = new Counter({
    name: "gpudeck_unit_restarts_total",
    help: "Automatic restarts systemd counted for the unit (NRestarts; resets when the unit is started by hand)",
    labelNames: ["unit"] as const,
    registers,
  });

  const fresh = input.telemetry.state === "ok";
  up.set(fresh ? 1 : 0);

  if (fresh && input.sample) {
    for (const g of input.sample.gpus) {
      const labels = { uuid: g.uuid, index: g.index === null ? "" : String(g.index), name: g.name };
      setIfNumber(memUsed, labels, g.memoryUsedMiB, MIB);
      setIfNumber(memTotal, labels, g.memoryTotalMiB, MIB);
      setIfNumber(util, labels, g.utilizationPct, 0.01);
      setIfNumber(temp, labels, g.temperatureC, 1);
      setIfNumber(power, labels, g.powerW, 1);
      // not reported ([N/A], or an older agent's sample): no series, never 0
      setIfNumber(powerLimit, labels, g.powerLimitW ?? null, 1);
      setIfNumber(memUtil, labels, g.memoryUtilizationPct ?? null, 0.01);
      setIfNumber(smClock, labels, g.smClockMHz ?? null, 1e6);
      setIfNumber(smClockMax, labels, g.smClockMaxMHz ?? null, 1e6);
      for (const h of g.holders) {
        // nvidia-smi printed [N/A] for this process: no number, so no series (never 0)
        if (h.usedMiBUnknown) continue;
        procMem.set({ uuid: g.uuid, pid: String(h.pid), unit: h.unit ?? "", process: h.processName, kind: h.kind }, h.usedMiB * MIB);
      }
      if (g.memoryUsedMiB !== null) unattributed.set({ uuid: g.uuid }, g.unattributedMiB * MIB);
    }
  }

  for (const u of input.units) {
    unitState.set({ unit: u.name, active_state: u.activeState, sub_state: u.subState }, 1);
    if (Number.isFinite(u.nRestarts) && u.nRestarts >= 0) restarts.inc({ unit: u.name }, u.nRestarts);
  }

  if (input.systemd) {
    const systemdUp = new Gauge({
      name: "gpudeck_systemd_up",
      help: "1 when the agent is connected to systemd",
      registers,
    });
    systemdUp.set(input.systemd.state === "ok" ? 1 : 0);
  }

  if (input.eventStreams !== undefined) {
    new Gauge({ name: "gpudeck_agent_event_streams", help: "open events.watch subscriptions (one per panel process)", registers }).set(input.eventStreams);
  }

  if (fresh && input.sample) registerHealthMetrics(registers, input.sample);
  // the GPUs of the latest sample even when it is stale: a counter's series must not come and go
  if (input.faults) registerFaultMetrics(registers, input.faults, input.sample?.gpus ?? []);
  if (input.engines) registerReadinessMetrics(registers, input.engines);

  return registry.metrics();
}

function setIfNumber<L extends string>(gauge: Gauge<L>, labels: Record<L, string>, value: number | null, scale: number): void {
  if (value === null || !Number.isFinite(value)) return;
  gauge.set(labels as Parameters<Gauge<L>["set"]>[0] & object, value * scale);
}
