/** Builders for tests of the live store and the fleet pages. */
import type { HostSnapshot, HostSummary, HostUnit } from "@/server/contract/fleet";
import type { GpuSample, UnitSummary } from "@/server/contract/types";

export function unit(name: string, activeState = "active", subState = "running", extra: Partial<UnitSummary> = {}): UnitSummary {
  return {
    name,
    description: name,
    activeState,
    subState,
    loadState: "loaded",
    unitFileState: "enabled",
    result: "success",
    mainPid: activeState === "active" ? 100 : 0,
    controlPid: 0,
    nRestarts: 0,
    stateChangeUsec: 1_000_000,
    job: null,
    ...extra,
  };
}

export function hostUnit(host: string, name: string, activeState = "active", subState = "running", extra: Partial<UnitSummary> = {}): HostUnit {
  return { ...unit(name, activeState, subState, extra), host };
}

export function summary(name: string, extra: Partial<HostSummary> = {}): HostSummary {
  return {
    name,
    state: "connected",
    sinceMs: 1_000,
    error: null,
    agentVersion: "0.1.0",
    hostname: name,
    simulated: true,
    source: "file",
    unitCounts: {},
    gpuTotals: { gpus: 0, usedMiB: null, totalMiB: null, exitedMiB: 0, telemetry: "ok" },
    systemd: "ok",
    ...extra,
  };
}

export function gpuSample(atMs: number, usedMiB = 1000): GpuSample {
  return {
    atMs,
    gpus: [
      {
        uuid: "GPU-0",
        index: 0,
        name: "H100",
        pciBusId: "0000:01:00.0",
        memoryTotalMiB: 81_559,
        memoryUsedMiB: usedMiB,
        utilizationPct: 0,
        temperatureC: 30,
        powerW: 70,
        holders: [],
        unattributedMiB: 0,
      },
    ],
  };
}

export function hostSnapshot(host: string, units: UnitSummary[], extra: Partial<HostSnapshot> = {}): HostSnapshot {
  return {
    kind: "host-snapshot",
    host,
    summary: summary(host),
    bootId: "b1",
    units,
    systemd: { state: "ok", message: "", sinceMs: 0 },
    telemetry: { state: "ok", message: "", sinceMs: 0 },
    gpu: null,
    atMs: 1_000,
    ...extra,
  };
}
