/** GPU history bucketed at the resolution drawn: sizes in bytes, the peak of a bucket and an exited holder kept, [N/A] stays null. */
import { describe, expect, it } from "vitest";
import { incidentDay } from "@/components/gpu-chart/fixtures";
import { decodeGpuHistory, deltaDecode, deltaEncode, runLengthDecode, runLengthEncode, type DecodedGpu } from "../contract/gpuHistory";
import type { GpuSample } from "../contract/types";
import { bucketGpuHistory } from "./gpuHistoryBuckets";
import { SampleHistory, thinForReply } from "./sampleHistory";

const DAY = 24 * 3600_000;
const UNIT = "vllm-kimi-k25.service";

describe("column encoding", () => {
  it("delta + run-length round-trips, nulls kept as nulls", () => {
    const values = [5, 5, 5, 5, null, null, null, 7, 8, 8, 1000, null, 1000, 1000, 1000];
    expect(deltaDecode(deltaEncode(values))).toEqual(values);
    expect(runLengthDecode(runLengthEncode(values))).toEqual(values);
    expect(deltaEncode([80_000, 80_000, 80_000, 80_000, 80_000])).toEqual([80_000, [4, 0]]);
  });
});

describe("a day of 8-GPU history (the incident at the end) bucketed", () => {
  const end = Date.UTC(2026, 11, 1, 12);
  const history = new SampleHistory();
  for (const s of incidentDay({ startMs: end - DAY + 1000, seconds: DAY / 1000, gpus: 8, unit: UNIT, killAtS: DAY / 1000 - 600 })) history.push(s);

  it("is at most 2,000 rows and ≤ 300 KB of JSON at 2,000 points (the old thinned reply was MBs)", () => {
    const all = history.since(0);
    const series = bucketGpuHistory(all, { sinceMs: end - DAY, untilMs: end, points: 2000 });
    const bytes = Buffer.byteLength(JSON.stringify(series));
    const old = Buffer.byteLength(JSON.stringify(thinForReply(all)));
    console.log(
      `24 h × 8 GPUs: ${all.length} samples; bucketed at 2,000 points ${(bytes / 1e3).toFixed(0)} KB; thinned to 360 samples ${(old / 1e3).toFixed(0)} KB`,
    );
    expect(bytes).toBeLessThanOrEqual(300_000);
    const decoded = decodeGpuHistory(series);
    expect(decoded.length).toBeLessThanOrEqual(2000);
    expect(decoded.length).toBeGreaterThan(1900);
    expect(decoded.every((s, i) => i === 0 || s.atMs > decoded[i - 1]!.atMs)).toBe(true);
    expect(decoded.at(-1)!.atMs).toBe(end);
    expect(decoded.every((s) => s.gpus.length === 8)).toBe(true);
  });

  it("the exited process's memory after the kill still shows, attributed to the unit", () => {
    const since = end - 15 * 60_000;
    const decoded = decodeGpuHistory(bucketGpuHistory(history.since(since), { sinceMs: since, untilMs: end, points: 120 }));
    const exited = decoded.flatMap((s) => s.gpus[0]!.holders.filter((h) => h.kind === "exited"));
    expect(exited.length).toBeGreaterThan(0);
    expect(exited.every((h) => h.unit === UNIT)).toBe(true);
    expect(Math.max(...exited.map((h) => h.usedMiB))).toBeGreaterThan(60_000);
  });
});

function spikeDay(): GpuSample[] {
  const out: GpuSample[] = [];
  const start = Date.UTC(2026, 11, 1);
  for (let s = 0; s < 3600; s += 10) {
    const used = s === 1800 ? 139_000 : 40_000; // one sample of 139 GB in an hour
    out.push({
      atMs: start + s * 1000,
      gpus: [
        {
          uuid: "GPU-0",
          index: 0,
          name: "NVIDIA GB10",
          pciBusId: "0000000F:01:00.0",
          memoryTotalMiB: 143_771,
          memoryUsedMiB: used,
          utilizationPct: s === 1800 ? 100 : 20,
          temperatureC: null,
          powerW: null,
          powerLimitW: null,
          smClockMHz: s === 1810 ? 600 : 1980,
          smClockMaxMHz: 1980,
          unattributedMiB: 0,
          holders: [
            { kind: "unit", pid: 7, unit: UNIT, processName: "python3", cmdline: [], state: "running", usedMiB: used - 1000 },
            { kind: "unit", pid: 8, unit: UNIT, processName: "python3", cmdline: [], state: "running", usedMiB: 1000 },
          ],
        },
      ],
    });
  }
  return out;
}

describe("one bucket holding a spike", () => {
  const samples = spikeDay();
  const series = bucketGpuHistory(samples, { sinceMs: samples[0]!.atMs, points: 30 });
  const decoded = decodeGpuHistory(series);

  it("keeps its peak (memory, utilisation) and its lowest SM clock; the bucket's min and last too", () => {
    expect(decoded.length).toBeLessThanOrEqual(30);
    const peak = decoded.find((s) => s.gpus[0]!.memoryUsedMiB === 139_000) as GpuSample | undefined;
    expect(peak).toBeDefined();
    const g = peak!.gpus[0] as DecodedGpu;
    expect(g.memoryUsedMinMiB).toBe(40_000);
    expect(g.memoryUsedLastMiB).toBe(40_000);
    expect(g.utilizationPct).toBe(100);
    expect(g.smClockMHz).toBe(600);
    // both processes of the unit summed, at the peak
    expect(g.holders).toEqual([expect.objectContaining({ kind: "unit", unit: UNIT, usedMiB: 139_000 })]);
    expect(decoded.filter((s) => s.gpus[0]!.memoryUsedMiB === 139_000)).toHaveLength(1);
  });

  it("throttle reasons: active in the bucket where they were reported; not reported stays null", () => {
    const throttled = samples.map((s, i) => ({
      ...s,
      gpus: s.gpus.map((g) => ({ ...g, throttleReasons: i < 24 ? null : i === 181 ? ["sw_power_cap"] : [] })),
    }));
    const out = decodeGpuHistory(bucketGpuHistory(throttled, { sinceMs: samples[0]!.atMs, points: 30 }));
    expect(out[0]!.gpus[0]!.throttleReasons).toBeNull();
    expect(out.filter((s) => s.gpus[0]!.throttleReasons?.includes("sw_power_cap"))).toHaveLength(1);
    expect(out.at(-1)!.gpus[0]!.throttleReasons).toEqual([]);
  });

  it("values not reported ([N/A]) stay null, never 0", () => {
    for (const s of decoded) {
      const g = s.gpus[0] as DecodedGpu;
      expect(g.temperatureC).toBeNull();
      expect(g.powerW).toBeNull();
      expect(g.powerLimitW).toBeNull();
      expect(g.smClockMaxMHz).toBe(1980);
    }
  });

  it("a GPU missing from some samples is missing from those buckets (a gap, not zeros)", () => {
    const withHole = samples.map((s, i) => (i >= 100 && i < 200 ? { ...s, gpus: [] } : s));
    const out = decodeGpuHistory(bucketGpuHistory(withHole, { sinceMs: samples[0]!.atMs, points: 360 }));
    expect(out.filter((s) => s.gpus.length === 0)).toHaveLength(100);
  });
});
