/**
 * Builders for GPU samples used by tests, the benchmark and the visual harness.
 * Not test-only code paths: the same shapes the agent produces (server/agent/types.ts).
 */
import type { GpuAttributed, GpuHolder, GpuSample } from "@/server/contract/types";

export const H200_TOTAL_MIB = 143_771;

export function holder(kind: GpuHolder["kind"], unit: string | null, usedMiB: number, pid = 1000): GpuHolder {
  return {
    kind,
    pid,
    unit,
    processName: kind === "exited" ? "[exited]" : "python3",
    cmdline: [],
    state: kind === "exited" ? "gone" : "running",
    usedMiB,
  };
}

export function gpu(index: number, holders: GpuHolder[], extra: Partial<GpuAttributed> = {}): GpuAttributed {
  const attributed = holders.reduce((a, h) => a + h.usedMiB, 0);
  const unattributedMiB = extra.unattributedMiB ?? 0;
  return {
    uuid: `GPU-${index}`,
    index,
    name: "NVIDIA H200",
    pciBusId: `00000000:${(index + 0x18).toString(16).padStart(2, "0")}:00.0`,
    memoryTotalMiB: H200_TOTAL_MIB,
    memoryUsedMiB: attributed + unattributedMiB,
    utilizationPct: 50,
    temperatureC: 40,
    powerW: 300,
    holders,
    unattributedMiB,
    ...extra,
  };
}

/**
 * A day of 1 Hz samples on `gpus` GPUs: the unit holds ~70 GiB on GPUs 0–3, another unit on
 * 4–7, a process outside units on GPU 7; at `killAtS` the unit's server is killed and its
 * memory stays held by an exited process, draining to zero over 30 s; the new server loads
 * from `reloadAtS`.
 */
export function incidentDay(opts: { startMs: number; seconds: number; gpus: number; unit: string; killAtS?: number; reloadAtS?: number }): GpuSample[] {
  const { startMs, seconds, gpus, unit } = opts;
  const killAt = opts.killAtS ?? Math.floor(seconds * 0.9);
  const reloadAt = opts.reloadAtS ?? killAt + 45;
  const out: GpuSample[] = new Array(seconds);
  for (let s = 0; s < seconds; s++) {
    const list: GpuAttributed[] = [];
    for (let g = 0; g < gpus; g++) {
      const holders: GpuHolder[] = [];
      if (g < gpus / 2) {
        const full = 70_000 + ((s * 7 + g * 13) % 500);
        if (s < killAt) holders.push(holder("unit", unit, full, 100 + g));
        else if (s < killAt + 30) holders.push(holder("exited", unit, Math.round(full * (1 - (s - killAt) / 30)), 100 + g));
        if (s >= reloadAt) holders.push(holder("unit", unit, Math.min(full, (s - reloadAt) * 4000), 200 + g));
      } else {
        holders.push(holder("unit", "other.service", 40_000 + (s % 300), 300 + g));
        if (g === gpus - 1) holders.push(holder("outside", null, 2_000, 400));
      }
      list.push(gpu(g, holders, { unattributedMiB: 512 }));
    }
    out[s] = { atMs: startMs + s * 1000, gpus: list };
  }
  return out;
}
