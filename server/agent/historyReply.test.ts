/** `gpus.history` without `points` from `sinceMs: 0` over a generated day of 8-GPU history answers at most 360 samples (each slice's peak), under 2 MB of JSON. */
import { describe, expect, it } from "vitest";
import type { GpuSample } from "../contract/types";
import { HISTORY_REPLY_MAX_SAMPLES, SampleHistory } from "./sampleHistory";

const DAY = 24 * 3600_000;

function sample(atMs: number): GpuSample {
  return {
    atMs,
    gpus: Array.from({ length: 8 }, (_, i) => ({
      uuid: `GPU-${i}0000000-1111-2222-3333-444444444444`,
      index: i,
      name: "NVIDIA H200",
      pciBusId: `00000000:${(0x18 + i).toString(16)}:00.0`,
      memoryTotalMiB: 143_771,
      memoryUsedMiB: 100_000 + ((atMs / 1000) % 1000),
      utilizationPct: 87,
      temperatureC: 61,
      powerW: 512.3,
      throttleReasons: [],
      eccCorrectedVolatile: 0,
      eccUncorrectedVolatile: 0,
      unattributedMiB: 0,
      holders: [
        {
          kind: "unit",
          pid: 4242,
          unit: "vllm-kimi-k25.service",
          processName: "python3",
          cmdline: ["python3", "-m", "vllm.entrypoints.openai.api_server"],
          state: "running",
          usedMiB: 100_000,
        },
        { kind: "unit", pid: 4343, unit: "vllm-embed-small.service", processName: "python3", cmdline: [], state: "running", usedMiB: 2_000 },
      ],
    })) as GpuSample["gpus"],
  };
}

describe("a day of 8-GPU history asked from sinceMs: 0", () => {
  it("is thinned to at most HISTORY_REPLY_MAX_SAMPLES samples, under 2 MB, spanning the whole day", () => {
    const history = new SampleHistory();
    const end = Date.now();
    // one sample a second: the last hour kept whole, the rest one per 10 s
    for (let t = end - DAY + 1000; t <= end; t += 1000) history.push(sample(t));
    const everything = history.since(0);
    const full = JSON.stringify(everything).length;
    const reply = history.forReply(0);
    const bytes = JSON.stringify(reply).length;
    console.log(`gpus.history from 0: ${everything.length} samples, ${(full / 1e6).toFixed(1)} MB → ${reply.length} samples, ${(bytes / 1e6).toFixed(2)} MB`);
    expect(full).toBeGreaterThan(10_000_000); // what it answered before
    expect(reply.length).toBeLessThanOrEqual(HISTORY_REPLY_MAX_SAMPLES);
    expect(bytes).toBeLessThanOrEqual(2_000_000);
    // the first slice is represented by its peak, within the first 4 minutes
    expect(reply[0]!.atMs - everything[0]!.atMs).toBeLessThan(DAY / 359);
    expect(reply.at(-1)!.atMs).toBe(end);
    const sorted = reply.every((s, i) => i === 0 || s.atMs > reply[i - 1]!.atMs);
    expect(sorted).toBe(true);
  });

  it("each slice is represented by its peak: a one-sample spike survives the thinning", () => {
    const history = new SampleHistory();
    const end = Date.now();
    for (let t = end - DAY + 1000; t <= end; t += 1000) history.push(sample(t));
    const all = history.since(0);
    const spike = all[Math.floor(all.length / 2)]!;
    spike.gpus[0]!.memoryUsedMiB = 140_000;
    expect(history.forReply(0).some((s) => s.gpus[0]!.memoryUsedMiB === 140_000)).toBe(true);
  });

  it("a short range (the charts' 30 minutes at 1 s) stays as it is up to the cap", () => {
    const history = new SampleHistory();
    const end = Date.now();
    for (let t = end - 300_000; t <= end; t += 1000) history.push(sample(t));
    expect(history.forReply(end - 300_000)).toHaveLength(301);
  });
});
