/** A host in one line for the fleet overview: connection, units by state, GPU memory (never a number that was not reported). */
import type { GpuTotals, HostSummary } from "../../contract/fleet";
import type { BackendStatus, GpuSample, UnitSummary } from "../../contract/types";
import type { HostConfig } from "./hostsConfig";

/** What a summary is made of (a HostLink has all of it). */
export interface SummarySource {
  name: string;
  state: HostSummary["state"];
  sinceMs: number;
  error: string | null;
  agentVersion: string | null;
  hostname: string | null;
  simulated: boolean;
  config: Pick<HostConfig, "source">;
  units: ReadonlyMap<string, UnitSummary>;
  gpu: GpuSample | null;
  telemetry: BackendStatus | null;
  systemd: BackendStatus | null;
}

export function gpuTotals(sample: GpuSample | null, telemetry: GpuTotals["telemetry"]): GpuTotals {
  if (!sample) return { gpus: 0, usedMiB: null, totalMiB: null, exitedMiB: 0, telemetry };
  let used: number | null = null;
  let total: number | null = null;
  let exited = 0;
  for (const g of sample.gpus) {
    if (g.memoryUsedMiB !== null) used = (used ?? 0) + g.memoryUsedMiB;
    if (g.memoryTotalMiB !== null) total = (total ?? 0) + g.memoryTotalMiB;
    for (const h of g.holders) if (h.kind === "exited") exited += h.usedMiB;
  }
  return { gpus: sample.gpus.length, usedMiB: used, totalMiB: total, exitedMiB: exited, telemetry };
}

export function summarize(link: SummarySource): HostSummary {
  const unitCounts: Record<string, number> = {};
  for (const u of link.units.values()) unitCounts[u.activeState] = (unitCounts[u.activeState] ?? 0) + 1;
  return {
    name: link.name,
    state: link.state,
    sinceMs: link.sinceMs,
    error: link.error,
    agentVersion: link.agentVersion,
    hostname: link.hostname,
    simulated: link.simulated,
    source: link.config.source,
    unitCounts,
    gpuTotals: gpuTotals(link.gpu, link.telemetry?.state ?? null),
    systemd: link.systemd?.state ?? null,
  };
}
