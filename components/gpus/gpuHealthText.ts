/**
 * A GPU's health facts in words for the GPUs page: why its clocks are held down (nvidia-smi's
 * clocks_event_reasons), its ECC error counts, the host memory pool a unified-memory GPU shares.
 * Not reported is "not reported", never 0 or "none".
 */
import { formatMiB } from "@/server/contract/format";
import type { MemoryPool } from "@/server/contract/types";

const REASON_TEXT: Record<string, string> = {
  gpu_idle: "idle",
  applications_clocks_setting: "application clocks setting",
  sw_power_cap: "power cap (software)",
  hw_slowdown: "hardware slowdown",
  hw_thermal_slowdown: "too hot (hardware thermal slowdown)",
  hw_power_brake_slowdown: "power brake (hardware)",
  sw_thermal_slowdown: "too hot (software thermal slowdown)",
  sync_boost: "sync boost",
  display_clock_setting: "display clock setting",
};
/** reasons that cost performance and usually need someone: heat, power brakes, hardware slowdown */
const CONCERNING = new Set(["hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown"]);

export type HealthTone = "ok" | "warn" | "bad" | "unknown";

export function throttleReasonText(reason: string): string {
  return REASON_TEXT[reason] ?? reason.replace(/_/g, " ");
}

export function throttleText(reasons: readonly string[] | null | undefined): { text: string; tone: HealthTone } {
  if (reasons == null) return { text: "not reported", tone: "unknown" };
  if (reasons.length === 0) return { text: "not held down", tone: "ok" };
  return { text: `held down: ${reasons.map(throttleReasonText).join(", ")}`, tone: reasons.some((r) => CONCERNING.has(r)) ? "warn" : "ok" };
}

export function eccText(corrected: number | null | undefined, uncorrected: number | null | undefined): { text: string; tone: HealthTone } {
  if (corrected == null && uncorrected == null) return { text: "not reported (ECC off or unsupported)", tone: "unknown" };
  const n = (v: number | null | undefined) => (v == null ? "n/a" : String(v));
  const tone: HealthTone = (uncorrected ?? 0) > 0 ? "bad" : (corrected ?? 0) > 0 ? "warn" : "ok";
  return { text: `${n(corrected)} corrected · ${n(uncorrected)} uncorrected since the driver loaded`, tone };
}

/** "Shares system memory: 23.0 GiB in use, 96.0 GiB available of 119 GiB" */
export function memoryPoolText(pool: MemoryPool): string {
  const used = Math.max(0, pool.totalMiB - pool.availableMiB);
  return `Shares system memory (unified memory): ${formatMiB(used)} in use, ${formatMiB(pool.availableMiB)} available of ${formatMiB(pool.totalMiB)}`;
}
