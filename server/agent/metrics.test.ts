import { register as globalRegistry } from "prom-client";
import { describe, expect, it } from "vitest";
import { METRICS_CONTENT_TYPE, renderMetrics } from "./metrics";
import type { BackendStatus, GpuSample, UnitSummary } from "../contract/types";

const ok: BackendStatus = { state: "ok", message: "1 GPU", sinceMs: 0 };
const stale: BackendStatus = { state: "stale", message: "no sample for 3.1 s", sinceMs: 0 };
const UUID = "GPU-5e1f0c2a-7b3d-4e8f-9a01-000000000001";
const MIB = 1048576;

const sample: GpuSample = {
  atMs: 1,
  gpus: [
    {
      uuid: UUID,
      index: 0,
      name: "NVIDIA H200",
      pciBusId: "00000000:18:00.0",
      memoryTotalMiB: 143771,
      memoryUsedMiB: 132000,
      utilizationPct: 45,
      temperatureC: 51,
      powerW: null,
      holders: [
        { kind: "unit", pid: 5000, unit: "vllm-kimi.service", processName: "VLLM::EngineCore", cmdline: [], state: "running", usedMiB: 2000 },
        {
          kind: "exited",
          pid: 4242,
          unit: "vllm-kimi.service",
          processName: "VLLM::EngineCore",
          cmdline: [],
          state: "gone",
          usedMiB: 129_000,
          exitedAtMs: 0,
        },
      ],
      unattributedMiB: 1000,
    },
    {
      uuid: "GPU-gb10",
      index: null,
      name: "NVIDIA GB10",
      pciBusId: "",
      memoryTotalMiB: null,
      memoryUsedMiB: null,
      utilizationPct: null,
      temperatureC: null,
      powerW: null,
      holders: [],
      unattributedMiB: 0,
    },
  ],
};

function unit(name: string, activeState: string, subState: string, nRestarts: number): UnitSummary {
  return {
    name,
    description: "",
    loadState: "loaded",
    unitFileState: "enabled",
    activeState,
    subState,
    result: "success",
    mainPid: 0,
    controlPid: 0,
    nRestarts,
    stateChangeUsec: 0,
    job: null,
  };
}

/** name{labels} value, for the series lines only */
function series(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const i = line.lastIndexOf(" ");
    m.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return m;
}

describe("renderMetrics", () => {
  it("renders the issue's metric names with the right values and units", async () => {
    const text = await renderMetrics({
      sample,
      telemetry: ok,
      units: [unit("vllm-kimi.service", "activating", "start-pre", 3), unit("other.service", "active", "running", 0)],
    });
    const s = series(text);
    const g = `{uuid="${UUID}",index="0",name="NVIDIA H200"}`;
    expect(s.get(`gpudeck_gpu_memory_used_bytes${g}`)).toBe(132000 * MIB);
    expect(s.get(`gpudeck_gpu_memory_total_bytes${g}`)).toBe(143771 * MIB);
    expect(s.get(`gpudeck_gpu_utilization_ratio${g}`)).toBeCloseTo(0.45);
    expect(s.get(`gpudeck_gpu_temperature_celsius${g}`)).toBe(51);
    expect(s.get(`gpudeck_gpu_process_memory_bytes{uuid="${UUID}",pid="5000",unit="vllm-kimi.service",process="VLLM::EngineCore",kind="unit"}`)).toBe(
      2000 * MIB,
    );
    expect(s.get(`gpudeck_gpu_process_memory_bytes{uuid="${UUID}",pid="4242",unit="vllm-kimi.service",process="VLLM::EngineCore",kind="exited"}`)).toBe(
      129_000 * MIB,
    );
    expect(s.get(`gpudeck_gpu_unattributed_memory_bytes{uuid="${UUID}"}`)).toBe(1000 * MIB);
    expect(s.get("gpudeck_gpu_telemetry_up")).toBe(1);
    expect(s.get(`gpudeck_unit_state{unit="vllm-kimi.service",active_state="activating",sub_state="start-pre"}`)).toBe(1);
    expect(s.get(`gpudeck_unit_state{unit="other.service",active_state="active",sub_state="running"}`)).toBe(1);
    expect(s.get(`gpudeck_unit_restarts_total{unit="vllm-kimi.service"}`)).toBe(3);
    expect(s.get(`gpudeck_unit_restarts_total{unit="other.service"}`)).toBe(0);
    expect(text).toContain("# TYPE gpudeck_unit_restarts_total counter");
    expect(text).toContain("# TYPE gpudeck_gpu_memory_used_bytes gauge");
  });

  it("power limit, memory utilisation and SM clocks; [N/A] (null) gives no series", async () => {
    const withLanes = structuredClone(sample);
    Object.assign(withLanes.gpus[0]!, { powerLimitW: 700, memoryUtilizationPct: 40, smClockMHz: 1755, smClockMaxMHz: null });
    const s = series(await renderMetrics({ sample: withLanes, telemetry: ok, units: [] }));
    const g = `{uuid="${UUID}",index="0",name="NVIDIA H200"}`;
    expect(s.get(`gpudeck_gpu_power_limit_watts${g}`)).toBe(700);
    expect(s.get(`gpudeck_gpu_memory_utilization_ratio${g}`)).toBeCloseTo(0.4);
    expect(s.get(`gpudeck_gpu_sm_clock_hertz${g}`)).toBe(1755e6);
    expect(s.has(`gpudeck_gpu_sm_clock_max_hertz${g}`)).toBe(false);
  });

  it("a value that is not a number gives no series, never 0", async () => {
    const text = await renderMetrics({ sample, telemetry: ok, units: [] });
    expect(text).not.toMatch(/gpudeck_gpu_power_watts\{/);
    expect(text).not.toContain('uuid="GPU-gb10"');
    // an unknown index is an empty label, not a made-up number
    const nullIndex = structuredClone(sample);
    nullIndex.gpus[0].index = null;
    expect(await renderMetrics({ sample: nullIndex, telemetry: ok, units: [] })).toContain(
      `gpudeck_gpu_memory_used_bytes{uuid="${UUID}",index="",name="NVIDIA H200"}`,
    );
  });

  it("stale or failing telemetry: up is 0 and the old sample is not exported as current", async () => {
    for (const telemetry of [stale, { ...stale, state: "error" as const }, { ...stale, state: "disabled" as const }]) {
      const s = series(await renderMetrics({ sample, telemetry, units: [unit("a.service", "failed", "failed", 1)] }));
      expect(s.get("gpudeck_gpu_telemetry_up")).toBe(0);
      expect([...s.keys()].some((k) => k.startsWith("gpudeck_gpu_memory"))).toBe(false);
      // units do not depend on GPU telemetry
      expect(s.get(`gpudeck_unit_state{unit="a.service",active_state="failed",sub_state="failed"}`)).toBe(1);
    }
    const none = series(await renderMetrics({ sample: null, telemetry: ok, units: [] }));
    expect(none.get("gpudeck_gpu_telemetry_up")).toBe(1);
    expect([...none.keys()].filter((k) => k.startsWith("gpudeck_gpu_memory"))).toEqual([]);
  });

  it("gone units and GPUs vanish at once; the global registry is untouched", async () => {
    await renderMetrics({ sample, telemetry: ok, units: [unit("old.service", "active", "running", 0)] });
    const text = await renderMetrics({ sample: null, telemetry: ok, units: [] });
    expect(text).not.toContain("old.service");
    expect(text).not.toContain(UUID);
    expect(await globalRegistry.getSingleMetric("gpudeck_gpu_telemetry_up")).toBeUndefined();
  });

  it("escapes label values and reports systemd when asked", async () => {
    const odd = structuredClone(sample);
    odd.gpus[0].holders = [{ kind: "outside", pid: 7, unit: null, processName: 'py "x"\\y', cmdline: [], state: "running", usedMiB: 1 }];
    const text = await renderMetrics({ sample: odd, telemetry: ok, units: [], systemd: { state: "unreachable", message: "", sinceMs: 0 } });
    expect(text).toContain(`process="py \\"x\\"\\\\y",kind="outside"`);
    expect(text).toContain('unit=""');
    expect(series(text).get("gpudeck_systemd_up")).toBe(0);
    expect(METRICS_CONTENT_TYPE).toMatch(/^text\/plain/);
  });
});
