import { describe, expect, it } from "vitest";
import type { GpuAttributed, GpuHolder, GpuSample } from "@/server/contract/types";
import { gpuWaitLine, gpuWaitPreview, gpuWaitTotalMiB } from "./gpuWaitPreview";

const holder = (kind: GpuHolder["kind"], pid: number, unit: string | null, usedMiB: number, extra: Partial<GpuHolder> = {}): GpuHolder => ({
  kind,
  pid,
  unit,
  processName: "python3",
  cmdline: ["python3"],
  state: kind === "exited" ? "gone" : "running",
  usedMiB,
  ...extra,
});
const gpu = (index: number, holders: GpuHolder[]): GpuAttributed => ({
  uuid: `GPU-${index}`,
  index,
  name: "H200",
  pciBusId: "",
  memoryTotalMiB: 143_771,
  memoryUsedMiB: 1,
  utilizationPct: 0,
  temperatureC: 30,
  powerW: 100,
  holders,
  unattributedMiB: 0,
});
const sample = (gpus: GpuAttributed[]): GpuSample => ({ atMs: 1, gpus });

describe("gpuWaitPreview", () => {
  it("per GPU the unit's live and exited holders; other units and outsiders are not waited for", () => {
    const s = sample([
      gpu(1, [holder("unit", 11, "a.service", 70_000), holder("exited", 10, "a.service", 5_000), holder("unit", 20, "b.service", 1_000)]),
      gpu(0, [holder("exited", 9, "a.service", 76_800)]),
      gpu(2, [holder("outside", 30, null, 2_048)]),
    ]);
    const items = gpuWaitPreview(s, "a.service");
    expect(items.map((w) => [w.index, w.heldMiB, w.pids, w.exitedPids])).toEqual([
      [0, 76_800, [], [9]],
      [1, 75_000, [11], [10]],
    ]);
    expect(gpuWaitLine(items[1]!)).toBe("GPU 1: 73.2 GiB by PID 11 · exited 10");
    expect(gpuWaitTotalMiB(items)).toBe(151_800);
    expect(gpuWaitPreview(s, "c.service")).toEqual([]);
    expect(gpuWaitPreview(null, "a.service")).toEqual([]);
  });

  it("memory nvidia-smi did not report is never counted or shown as 0", () => {
    const items = gpuWaitPreview(sample([gpu(0, [holder("unit", 11, "a.service", 0, { usedMiBUnknown: true })])]), "a.service");
    expect(gpuWaitLine(items[0]!)).toBe("GPU 0: an amount not reported by PID 11");
    expect(gpuWaitTotalMiB(items)).toBeNull();
  });
});
