/**
 * Serving, not just running: whether an inference engine under a unit answers requests yet, which
 * load stage it is in (from its own log lines), and the few engine metrics the agent scrapes.
 * systemd says `active (running)` right after the fork of a Type=simple unit; a large model then
 * loads for minutes. Part of the contract: imports nothing else of the project.
 */
/** ms since the epoch (as in ./types.ts, which imports this file) */
type Ms = number;

/** The engines the agent recognises from a unit's ExecStart (also inside `docker run …`). */
export type EngineKind = "vllm" | "sglang" | "llama.cpp" | "ollama" | "tgi";
export const ENGINE_KINDS: readonly EngineKind[] = ["vllm", "sglang", "llama.cpp", "ollama", "tgi"];

/**
 * unknown: the unit is not running, no engine was recognised, or nothing is known yet;
 * loading: running, the engine is not serving yet (a start we watched, or its log says it loads);
 * serving: the engine's own endpoint answers (or, with probes off, it logged its ready line);
 * not-serving: running, but the endpoint does not answer (and nothing says it is loading);
 * failed: the engine logged a fatal error (out of memory, model not found, a traceback …).
 */
export type ReadinessState = "unknown" | "loading" | "serving" | "not-serving" | "failed";
export const READINESS_STATES: readonly ReadinessState[] = ["unknown", "loading", "serving", "not-serving", "failed"];

export interface ReadinessProbe {
  /** what was asked, e.g. http://127.0.0.1:8000/health */
  url: string;
  ok: boolean;
  /** the HTTP status; null when nothing answered (connection refused, timeout) */
  status: number | null;
  atMs: Ms;
  /** why it failed, in words ("connection refused", "503: Loading model", "timed out after 2 s") */
  detail?: string;
}

/** A duration the engine itself logged for a stage it finished ("Loading weights took 24.84 seconds"). */
export interface EngineTiming {
  stage: string;
  seconds: number;
}

export interface Readiness {
  state: ReadinessState;
  engine: EngineKind | null;
  /** the load stage as words: "loading weights", "capturing CUDA graphs" …; null when serving or unknown */
  stage: string | null;
  /** of the current stage, when the engine prints it (checkpoint shards 37/119, CUDA graphs 33/67) */
  progress: { done: number; total: number } | null;
  /** why it is failed or not serving, in the engine's or the probe's words; null otherwise */
  reason: string | null;
  /** the part of `reason` quoted from the engine's log (an exception's message): callers without the journal permission get it hidden */
  reasonQuote?: string | null;
  /** when `state` began */
  sinceMs: Ms;
  /** the last probe of the engine's own endpoint; null before the first, or with probes off */
  probe: ReadinessProbe | null;
  /** model names the engine serves (vLLM /v1/models, Ollama /api/ps …) */
  models: string[];
  /** when `stage` began; absent from agents before this field */
  stageSinceMs?: Ms | null;
  /** the engine's last log line that set the stage or the failure, as logged (ANSI colour removed) */
  line?: { atMs: Ms; text: string } | null;
  /** true where the panel removed `line` because the caller may not read journals (contract/roleViews.ts) */
  lineHidden?: boolean;
  /** stage durations the engine logged in this run, oldest first */
  timings?: EngineTiming[];
  /** MiB of GPU memory per loaded model, where the engine reports it (Ollama /api/ps size_vram) */
  vramMiB?: Record<string, number>;
  /** a warning the engine logged that is not a failure (Ollama found no GPU and runs on the CPU); absent when none */
  warning?: string | null;
  /**
   * While loading: when the engine is expected to serve (epoch ms), from the unit's last starts
   * that reached serving (the median time from entering the current stage to serving). Absent
   * when unknown (no such start recorded, or not loading). It may lie in the past: "taking
   * longer than usual", never "ready in …" (see `readyEstimateWords`).
   */
  estimatedReadyAtMs?: Ms;
}

/** A change of a unit's readiness state or stage, for the timeline's readiness lane. */
export interface ReadinessTransition {
  unit: string;
  atMs: Ms;
  /** null: the first record of the unit */
  from: { state: ReadinessState; stage: string | null } | null;
  to: { state: ReadinessState; stage: string | null };
  engine: EngineKind | null;
  progress: { done: number; total: number } | null;
  reason: string | null;
  /** as Readiness.reasonQuote */
  reasonQuote?: string | null;
}

/**
 * A few series from the engine's Prometheus `/metrics` (vLLM, SGLang, llama.cpp with `--metrics`,
 * TGI), summed over the engine's label sets; null where the engine does not export one.
 */
export interface EngineMetrics {
  atMs: Ms;
  requestsRunning: number | null;
  requestsWaiting: number | null;
  /** fraction of the KV cache in use, 0..1 */
  kvCacheUsage: number | null;
  /** generated tokens per second between the last two scrapes (or the engine's own gauge) */
  generationTokensPerS: number | null;
  /** mean time to first token of the requests that got one between the last two scrapes */
  ttftSeconds: number | null;
}

/** Readiness of a unit nobody has judged yet (inactive, no engine, or an agent without readiness). */
export function unknownReadiness(sinceMs: Ms, engine: EngineKind | null = null): Readiness {
  return { state: "unknown", engine, stage: null, progress: null, reason: null, sinceMs, probe: null, models: [] };
}

/**
 * One row of `units.engineHistory { name, sinceMs, points }`: the engine's load and latency,
 * from its own metrics, over one time bucket (at most `points` rows; the bucket's last scrape
 * time). Load, KV cache and latencies: the bucket's peak; tokens/s: its mean. null = not reported.
 */
export interface EngineHistoryRow {
  atMs: Ms;
  running: number | null;
  waiting: number | null;
  /** fraction of the KV cache in use, 0..1 */
  kvCacheUsage: number | null;
  ttftP50Ms: number | null;
  ttftP95Ms: number | null;
  itlP50Ms: number | null;
  itlP95Ms: number | null;
  tokensPerSecond: number | null;
}

/**
 * "ready in about 3 min" while the estimate lies ahead, "taking longer than usual" once it has
 * passed, null when there is none (or the unit is not loading).
 */
export function readyEstimateWords(r: Pick<Readiness, "state" | "estimatedReadyAtMs"> | null | undefined, nowMs: number): string | null {
  if (!r || r.state !== "loading" || r.estimatedReadyAtMs === undefined) return null;
  const left = r.estimatedReadyAtMs - nowMs;
  if (left <= 0) return "taking longer than usual";
  if (left < 60_000) return "ready in under a minute";
  const min = Math.round(left / 60_000);
  if (min < 90) return `ready in about ${min} min`;
  const h = Math.round(left / 360_000) / 10;
  return `ready in about ${h} h`;
}
