/**
 * GPU health fields of `--query-gpu`: why clocks are held down (clocks_event_reasons.active, a
 * hex bitmask; drivers before 535 call it clocks_throttle_reasons.active) and ECC error counts
 * since the driver loaded. Like every cell, a placeholder ([N/A], [Not Supported] on GPUs
 * without ECC) is "not reported", never 0.
 */
/** Queried after the core fields; a driver that rejects one is queried without it (see the sampler). */
export const GPU_HEALTH_QUERY_FIELDS = ["clocks_event_reasons.active", "ecc.errors.corrected.volatile.total", "ecc.errors.uncorrected.volatile.total"] as const;

/** The name older drivers know a field by, tried before giving the field up. */
export const GPU_FIELD_FALLBACKS: Readonly<Record<string, string>> = {
  "clocks_event_reasons.active": "clocks_throttle_reasons.active",
};

/** NVML's clocks event reason bits (nvmlClocksEventReason*), named like nvidia-smi's per-reason fields. */
export const THROTTLE_REASON_BITS: readonly [bit: number, name: string][] = [
  [0x1, "gpu_idle"],
  [0x2, "applications_clocks_setting"],
  [0x4, "sw_power_cap"],
  [0x8, "hw_slowdown"],
  [0x10, "sync_boost"],
  [0x20, "sw_thermal_slowdown"],
  [0x40, "hw_thermal_slowdown"],
  [0x80, "hw_power_brake_slowdown"],
  [0x100, "display_clock_setting"],
];

/** Reasons that mean the GPU is slowed against the workload's will (worth showing as a warning). */
export const SLOWDOWN_REASONS: ReadonlySet<string> = new Set([
  "sw_power_cap",
  "hw_slowdown",
  "sw_thermal_slowdown",
  "hw_thermal_slowdown",
  "hw_power_brake_slowdown",
]);

/**
 * `0x0000000000000044` → ["sw_thermal_slowdown" …] in bit order; "0x0" → []; a placeholder or
 * junk → null. Unknown bits are named `bit_0x…` so nothing reported is lost.
 */
export function parseThrottleReasons(cell: string | undefined): string[] | null {
  if (cell === undefined) return null;
  const m = /^0x([0-9a-f]{1,16})$/i.exec(cell.trim());
  if (!m) return null;
  const mask = BigInt(`0x${m[1]}`);
  const names = new Map(THROTTLE_REASON_BITS.map(([bit, name]) => [BigInt(bit), name]));
  const reasons: string[] = [];
  for (let bit = 1n; bit <= mask; bit <<= 1n) {
    if (mask & bit) reasons.push(names.get(bit) ?? `bit_0x${bit.toString(16)}`);
  }
  return reasons;
}

/** An ECC counter cell: a non-negative integer, else null ([N/A] with ECC off, [Not Supported]). */
export function parseEccCount(cell: string | undefined): number | null {
  if (cell === undefined || !/^\d{1,15}$/.test(cell.trim())) return null;
  return Number(cell.trim());
}
