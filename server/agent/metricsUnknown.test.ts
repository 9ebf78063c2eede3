/**
 * A per-process [N/A] (Windows WDDM lists compute apps without used_memory) must give no
 * gpudeck_gpu_process_memory_bytes series, never 0: through the real attribution, as the agent
 * renders it.
 */
import { describe, expect, it } from "vitest";
import type { BackendStatus, GpuRawSample } from "../contract/types";
import { GpuAttributor } from "./gpu/attribution";
import { parseComputeAppsCsv } from "./gpu/csv";
import { renderMetrics } from "./metrics";

const ok: BackendStatus = { state: "ok", message: "", sinceMs: 0 };

describe("/metrics with [N/A] memory", () => {
  it("a process whose used_memory is [N/A] gives no series; its neighbour with a number does", async () => {
    const { apps } = parseComputeAppsCsv(
      "gpu_uuid, pid, process_name, used_gpu_memory [MiB]\nGPU-aaaa-1, 100, python.exe, [N/A]\nGPU-aaaa-1, 200, other.exe, 512\n",
    );
    expect(apps.map((a) => a.usedMiB)).toEqual([null, 512]);
    const raw: GpuRawSample = {
      atMs: 1,
      gpus: [
        { uuid: "GPU-aaaa-1", index: 0, name: "RTX", pciBusId: "", memoryTotalMiB: 8192, memoryUsedMiB: 3000, utilizationPct: 1, temperatureC: 40, powerW: 10 },
      ],
      apps,
    };
    const procs = { inspect: async (pid: number) => ({ info: { pid, state: "running" as const, cmdline: [`p${pid}`], startedAtMs: 1 }, unit: null }) };
    const sample = await new GpuAttributor(procs).attribute(raw);
    expect(sample.gpus[0]!.holders.find((h) => h.pid === 100)).toMatchObject({ usedMiB: 0, usedMiBUnknown: true });
    const text = await renderMetrics({ sample, telemetry: ok, units: [] });
    expect(text).not.toMatch(/gpudeck_gpu_process_memory_bytes\{[^}]*pid="100"/);
    expect(text).toMatch(/gpudeck_gpu_process_memory_bytes\{uuid="GPU-aaaa-1",pid="200",unit="",process="other.exe",kind="outside"\} 536870912/);
  });

  it("health series: clock event reasons, ECC counts, the unified pool, Xids — none for what was not reported", async () => {
    const text = await renderMetrics({
      sample: {
        atMs: 1,
        memoryPool: { totalMiB: 100, availableMiB: 40, unified: true },
        gpus: [
          {
            uuid: "GPU-a",
            index: 0,
            name: "x",
            pciBusId: "",
            memoryTotalMiB: null,
            memoryUsedMiB: null,
            utilizationPct: null,
            temperatureC: null,
            powerW: null,
            throttleReasons: ["sw_power_cap"],
            eccCorrectedVolatile: 2,
            eccUncorrectedVolatile: null,
            holders: [],
            unattributedMiB: 0,
          },
        ],
      },
      telemetry: ok,
      units: [],
      faults: [
        {
          id: "b-x1",
          kind: "xid",
          atMs: 1,
          code: 79,
          pci: "0000:3b:00",
          gpuUuid: "GPU-a",
          gpuIndex: 0,
          pid: null,
          processName: null,
          unit: null,
          text: "",
          title: "",
          meaning: "",
          advice: "",
          resetRequired: true,
          severity: "critical",
        },
      ],
    });
    expect(text).toMatch(/gpudeck_gpu_clocks_event_reason\{uuid="GPU-a",reason="sw_power_cap"\} 1/);
    expect(text).toMatch(/gpudeck_gpu_ecc_errors_volatile\{uuid="GPU-a",type="corrected"\} 2/);
    expect(text).not.toMatch(/type="uncorrected"/);
    expect(text).toMatch(/gpudeck_host_memory_pool_bytes\{kind="available"\} 41943040/);
    expect(text).toMatch(/gpudeck_gpu_xid_errors_total\{pci="0000:3b:00",uuid="GPU-a",code="79"\} 1/);
    expect(text).not.toMatch(/gpudeck_gpu_memory_used_bytes\{/);
  });
});
