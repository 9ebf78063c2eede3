/**
 * GPU samples → the telemetry lanes under the memory chart: utilisation (GPU and memory
 * controller), power (draw and limit), temperature, SM clock (now and max) and whether clocks
 * were held down (throttle reasons other than idle / an applications clock setting). Over
 * several GPUs: utilisation, temperature: the highest; power: the sum; SM clock: the lowest.
 * Not reported is null (a gap), never 0; a sum over GPUs is null unless every GPU reported.
 */
import type { GpuAttributed, GpuSample } from "@/server/contract/types";

/** Throttle reasons that are not a slowdown worth showing. */
const BENIGN_REASONS = new Set(["gpu_idle", "applications_clocks_setting"]);

export interface TelemetryLanes {
  /** seconds, as the lanes draw them */
  xs: number[];
  util: (number | null)[];
  memUtil: (number | null)[];
  power: (number | null)[];
  powerLimit: (number | null)[];
  temp: (number | null)[];
  sm: (number | null)[];
  smMax: (number | null)[];
  /** 1 where clocks were held down, 0 where reported and not, null where not reported */
  throttled: (0 | 1 | null)[];
  /** the reasons seen in the window (for the legend) */
  reasons: string[];
}

type Pick = (g: GpuAttributed) => number | null | undefined;

function fold(gs: readonly GpuAttributed[], pick: Pick, how: "max" | "min" | "sum"): number | null {
  let out: number | null = null;
  for (const g of gs) {
    const v = pick(g);
    if (v == null) {
      if (how === "sum") return null;
      continue;
    }
    out = out == null ? v : how === "max" ? Math.max(out, v) : how === "min" ? Math.min(out, v) : out + v;
  }
  return out;
}

export function telemetryLanes(samples: readonly GpuSample[], opts: { uuids?: readonly string[] | null; fromMs?: number; toMs?: number } = {}): TelemetryLanes {
  const want = opts.uuids && opts.uuids.length ? new Set(opts.uuids) : null;
  const out: TelemetryLanes = { xs: [], util: [], memUtil: [], power: [], powerLimit: [], temp: [], sm: [], smMax: [], throttled: [], reasons: [] };
  const reasons = new Set<string>();
  let lastAt = -Infinity;
  for (const s of samples) {
    if (s.atMs <= lastAt) continue; // the lanes draw increasing x
    if (opts.fromMs != null && s.atMs < opts.fromMs) continue;
    if (opts.toMs != null && s.atMs > opts.toMs) continue;
    const gs = want ? s.gpus.filter((g) => want.has(g.uuid)) : s.gpus;
    if (gs.length === 0) continue;
    lastAt = s.atMs;
    out.xs.push(s.atMs / 1000);
    out.util.push(fold(gs, (g) => g.utilizationPct, "max"));
    out.memUtil.push(fold(gs, (g) => g.memoryUtilizationPct, "max"));
    out.power.push(fold(gs, (g) => g.powerW, "sum"));
    out.powerLimit.push(fold(gs, (g) => g.powerLimitW, "sum"));
    out.temp.push(fold(gs, (g) => g.temperatureC, "max"));
    out.sm.push(fold(gs, (g) => g.smClockMHz, "min"));
    out.smMax.push(fold(gs, (g) => g.smClockMaxMHz, "max"));
    let known = false;
    let held = false;
    for (const g of gs) {
      if (!g.throttleReasons) continue;
      known = true;
      for (const r of g.throttleReasons) {
        if (BENIGN_REASONS.has(r)) continue;
        held = true;
        reasons.add(r);
      }
    }
    out.throttled.push(known ? (held ? 1 : 0) : null);
  }
  out.reasons = [...reasons].sort();
  return out;
}
