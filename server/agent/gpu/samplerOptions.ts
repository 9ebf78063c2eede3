/** The nvidia-smi sampler's options (sampler.ts) and their defaults. */

export interface NvidiaSmiAdapterOptions {
  /** GPUDECK_NVIDIA_SMI, or plain "nvidia-smi" to search PATH */
  nvidiaSmiPath: string;
  /** sampling period (default 1000 ms; below ~500 ms utilization adds nothing) */
  intervalMs?: number;
  log?: (message: string) => void;
  /** identical failure lines are logged at most this often (default 60 s) */
  quietLogMs?: number;
  /** a compute-apps call taking longer is SIGKILLed (default max(3 intervals, 5 s)) */
  appsTimeoutMs?: number;
  /**
   * compute apps are asked for when a GPU's used memory moved since the last answer, and at
   * least this often regardless (default 5 s; ≤ the interval: every interval, the old way)
   */
  appsRefreshMs?: number;
  /** allowance for NVML init before a new loop's first round (default max(3 intervals, 30 s)) */
  startupTimeoutMs?: number;
  /** restart backoff: base · 2^attempt, capped (defaults 1 s, 30 s) */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** a round is complete after this long without a new row (default min(200 ms, interval/4)) */
  quietGapMs?: number;
  /** environment of the spawned nvidia-smi (default: the agent's) */
  env?: NodeJS.ProcessEnv;
}

/** The options with their defaults filled in (all but the log's). */
export interface SamplerSettings {
  path: string;
  intervalMs: number;
  appsTimeoutMs: number;
  appsRefreshMs: number;
  startupTimeoutMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  quietGapMs: number;
  env: NodeJS.ProcessEnv | undefined;
}

export function samplerSettings(opts: NvidiaSmiAdapterOptions): SamplerSettings {
  const intervalMs = Math.max(50, opts.intervalMs ?? 1000);
  return {
    path: opts.nvidiaSmiPath,
    intervalMs,
    appsTimeoutMs: opts.appsTimeoutMs ?? Math.max(3 * intervalMs, 5000),
    appsRefreshMs: Math.max(intervalMs, opts.appsRefreshMs ?? 5000),
    startupTimeoutMs: opts.startupTimeoutMs ?? Math.max(3 * intervalMs, 30000),
    backoffBaseMs: opts.backoffBaseMs ?? 1000,
    backoffMaxMs: opts.backoffMaxMs ?? 30000,
    quietGapMs: opts.quietGapMs ?? Math.min(200, Math.floor(intervalMs / 4)),
    env: opts.env,
  };
}
