/**
 * What the agent probes for one unit: the engine it found in ExecStart (./detect.ts), adjusted by
 * the unit's overrides (./config.ts): another engine, an explicit probe URL, or probes off.
 */
import type { EngineKind } from "../../contract/readiness";
import type { UnitReadinessConfig } from "./config";
import type { EngineTarget } from "./detect";

export interface ProbePlan {
  engine: EngineKind | null;
  /** for models and /metrics; null when unknown */
  baseUrl: string | null;
  /** the health URL from the config, when set */
  probeUrl: string | null;
  /** probes run (an engine, an address, and not switched off) */
  probes: boolean;
  /** why there are no probes, in words; null when there are */
  problem: string | null;
  metrics: boolean;
}

const DEFAULT_BASE: Record<EngineKind, string> = {
  vllm: "http://127.0.0.1:8000",
  sglang: "http://127.0.0.1:30000",
  "llama.cpp": "http://127.0.0.1:8080",
  ollama: "http://127.0.0.1:11434",
  tgi: "http://127.0.0.1:3000",
};

export function probePlan(detected: EngineTarget | null, settings: UnitReadinessConfig | null): ProbePlan {
  const engine = settings?.engine ?? detected?.engine ?? null;
  if (!engine) return { engine: null, baseUrl: null, probeUrl: null, probes: false, problem: null, metrics: false };
  const same = detected?.engine === engine ? detected : null;
  const probeUrl = settings?.probeUrl ?? null;
  const baseUrl = probeUrl ? (same?.baseUrl ?? new URL(probeUrl).origin) : same ? same.baseUrl : DEFAULT_BASE[engine];
  const metrics = same?.metrics ?? false;
  if (settings?.probe === false)
    return { engine, baseUrl, probeUrl, probes: false, problem: "probes are off for this unit (GPUDECK_READINESS)", metrics: false };
  if (!probeUrl && !baseUrl) return { engine, baseUrl: null, probeUrl: null, probes: false, problem: same?.problem ?? "no address to probe", metrics: false };
  return { engine, baseUrl, probeUrl, probes: true, problem: null, metrics: metrics && baseUrl !== null };
}
