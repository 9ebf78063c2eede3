/**
 * The simulated hosts the demo can play (GPUDECK_SIM_PROFILE):
 * - incident: the incident gpudeck exists for, plus the usual ways a GPU service misbehaves
 *   (./units.ts);
 * - healthy: a host where everything serves, a different mix of engines and sizes;
 * - fleet: twenty small services spread over the GPUs (benchmarks of many hosts);
 * - spark: a GB10 (DGX Spark) whose one GPU shares the host's 128 GB (unified memory:
 *   nvidia-smi reports memory.used/total as [N/A]).
 */
import { demoUnits, INCIDENT_GPU_COUNT, type SimUnitSpec } from "./units";
import type { SimUnifiedMemory, SimWorld } from "./world";

export type SimProfile = "incident" | "healthy" | "fleet" | "spark";
export const SIM_PROFILES: readonly SimProfile[] = ["incident", "healthy", "fleet", "spark"];

/** How many GPUs the profile's host has, and whether they share the host's memory. */
export function profileHardware(profile: SimProfile): { gpus: number; unified: SimUnifiedMemory | null } {
  switch (profile) {
    case "incident":
      return { gpus: INCIDENT_GPU_COUNT, unified: null };
    case "spark":
      return { gpus: 1, unified: { hostTotalMiB: 122_502, baseUsedMiB: 9_800 } };
    default:
      return { gpus: 8, unified: null };
  }
}

/** Units of a profile; every one matches `vllm-*.service`, the demo's allow-list. */
export function profileUnits(profile: SimProfile, world: SimWorld): SimUnitSpec[] {
  switch (profile) {
    case "incident":
      return demoUnits(world);
    case "healthy":
      return healthyUnits();
    case "fleet":
      return fleetUnits(world, 20);
    case "spark":
      return [serving("vllm-spark-qwen.service", "vLLM: Qwen3 32B on a DGX Spark (unified memory)", [0], 71_000, 5 * 3600_000, 8000)];
  }
}

function serving(name: string, description: string, gpuIndexes: number[], perGpuMiB: number, ageMs: number, port: number): SimUnitSpec {
  return {
    name,
    description,
    fragmentPath: `/etc/systemd/system/${name}`,
    execStartPre: [],
    execStart: [
      "/opt/vllm/bin/vllm",
      "serve",
      `/models/${name.replace(/^vllm-|\.service$/g, "")}`,
      "--tensor-parallel-size",
      String(gpuIndexes.length),
      "--port",
      String(port),
    ],
    execStopPost: [],
    restart: "on-failure",
    restartMs: 5000,
    startLimitBurst: 5,
    startLimitIntervalMs: 10_000,
    timeoutStartMs: 600_000,
    timeoutStopMs: 90_000,
    stopMs: 1500,
    pre: null,
    main: {
      kind: "serve",
      gpuIndexes,
      perGpuMiB,
      loadMs: 6000,
      busyPct: 40 + (port % 45),
      workerName: (rank) => (gpuIndexes.length > 1 ? `VLLM::Worker_TP${rank}` : "VLLM::EngineCore"),
    },
    initially: "running",
    initialAgeMs: ageMs,
  };
}

function healthyUnits(): SimUnitSpec[] {
  return [
    serving("vllm-deepseek-v3.service", "vLLM: DeepSeek V3 (TP=4)", [0, 1, 2, 3], 118_000, 9 * 24 * 3600_000, 8000),
    serving("vllm-mistral-small.service", "vLLM: Mistral Small 3.2", [4], 52_000, 3 * 24 * 3600_000, 8010),
    serving("vllm-gemma-27b.service", "vLLM: Gemma 3 27B", [5, 6], 61_000, 27 * 3600_000, 8020),
    serving("vllm-rerank.service", "vLLM: bge reranker", [7], 7_400, 51 * 3600_000, 8030),
  ];
}

function fleetUnits(world: SimWorld, count: number): SimUnitSpec[] {
  const gpus = world.gpus.length;
  return Array.from({ length: count }, (_, i) =>
    serving(`vllm-svc-${String(i + 1).padStart(2, "0")}.service`, `vLLM: service ${i + 1}`, [i % gpus], 4_000 + (i % 5) * 1_000, (i + 1) * 3600_000, 8000 + i),
  );
}
