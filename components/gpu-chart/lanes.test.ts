import { describe, expect, it } from "vitest";
import { gpu, holder } from "./fixtures";
import { telemetryLanes } from "./lanes";
import type { GpuSample } from "@/server/contract/types";

const sample = (atMs: number, a: Partial<ReturnType<typeof gpu>>, b: Partial<ReturnType<typeof gpu>>): GpuSample => ({
  atMs,
  gpus: [gpu(0, [holder("unit", "u.service", 1000)], a), gpu(1, [], b)],
});

describe("telemetryLanes", () => {
  it("folds GPUs: utilisation and temperature the highest, power the sum, SM clock the lowest", () => {
    const l = telemetryLanes([
      sample(
        1000,
        { utilizationPct: 90, powerW: 500, powerLimitW: 700, smClockMHz: 1500, smClockMaxMHz: 1980, temperatureC: 70 },
        { utilizationPct: 10, powerW: 100, powerLimitW: 700, smClockMHz: 1980, smClockMaxMHz: 1980, temperatureC: 50 },
      ),
    ]);
    expect(l).toMatchObject({ xs: [1], util: [90], power: [600], powerLimit: [1400], sm: [1500], smMax: [1980], temp: [70] });
  });

  it("not reported is null, never 0; a sum is null unless every GPU reported", () => {
    const l = telemetryLanes([sample(1000, { utilizationPct: null, powerW: 300, memoryUtilizationPct: null }, { utilizationPct: null, powerW: null })]);
    expect(l.util).toEqual([null]);
    expect(l.memUtil).toEqual([null]);
    expect(l.power).toEqual([null]);
    expect(l.sm).toEqual([null]);
  });

  it("clocks held down: 1 for a real reason, 0 for idle or none, null when not reported; only the chosen GPUs", () => {
    const l = telemetryLanes(
      [
        sample(1000, { throttleReasons: ["sw_power_cap"] }, { throttleReasons: [] }),
        sample(2000, { throttleReasons: ["gpu_idle"] }, { throttleReasons: ["hw_thermal_slowdown"] }),
        sample(3000, { throttleReasons: null }, {}),
      ],
      { uuids: ["GPU-0"] },
    );
    expect(l.throttled).toEqual([1, 0, null]);
    expect(l.reasons).toEqual(["sw_power_cap"]);
  });
});
