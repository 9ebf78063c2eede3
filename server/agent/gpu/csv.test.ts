import { describe, expect, it } from "vitest";
import {
  NOT_A_NUMBER_CELLS,
  canonicalColumn,
  columnIndex,
  describeNvidiaSmiFailure,
  invalidQueryField,
  parseComputeAppRow,
  parseComputeAppsCsv,
  parseGpuCsv,
  parseHeaderLine,
  parseNumberCell,
  COMPUTE_APP_QUERY_FIELDS,
  GPU_QUERY_FIELDS,
} from "./csv";

const HEADER = "index, uuid, name, pci.bus_id, memory.total [MiB], memory.used [MiB], utilization.gpu [%], temperature.gpu, power.draw [W]";

describe("canonicalColumn", () => {
  it("strips unit suffixes and maps aliases", () => {
    expect(canonicalColumn("memory.used [MiB]")).toBe("memory.used");
    expect(canonicalColumn(" utilization.gpu [%] ")).toBe("utilization.gpu");
    expect(canonicalColumn("power.draw [W]")).toBe("power.draw");
    expect(canonicalColumn("gpu_name")).toBe("name");
    expect(canonicalColumn("gpu_bus_id")).toBe("pci.bus_id");
    expect(canonicalColumn("used_memory", "app")).toBe("used_gpu_memory");
    expect(canonicalColumn("used_gpu_memory [MiB]", "app")).toBe("used_gpu_memory");
    expect(canonicalColumn("Memory.Used [MiB]")).toBe("memory.used");
  });
});

describe("parseNumberCell", () => {
  it("reads numbers with or without units", () => {
    expect(parseNumberCell("81559")).toBe(81559);
    expect(parseNumberCell(" 81559 MiB ")).toBe(81559);
    expect(parseNumberCell("72.45")).toBe(72.45);
    expect(parseNumberCell("72.45 W")).toBe(72.45);
    expect(parseNumberCell("45 %")).toBe(45);
    expect(parseNumberCell("0")).toBe(0);
  });
  it.each(NOT_A_NUMBER_CELLS.map((c) => [c]))("%j is no sample (null), never 0", (cell) => {
    expect(parseNumberCell(cell)).toBeNull();
  });
  it("rejects other junk", () => {
    expect(parseNumberCell(undefined)).toBeNull();
    expect(parseNumberCell("12abc")).toBeNull();
    expect(parseNumberCell("Enabled")).toBeNull();
    expect(parseNumberCell("1e400")).toBeNull();
  });
});

describe("parseHeaderLine", () => {
  it("recognises headers and rejects data rows", () => {
    expect(parseHeaderLine(HEADER, "gpu")).toEqual(GPU_QUERY_FIELDS.slice(0, 9));
    expect(parseHeaderLine("0, GPU-3a1f9e02-4c11-4b8a-9e2d-7f6b1c0a55e1, NVIDIA H100 80GB HBM3, 00000000:1B:00.0, 81559, 0, 0, 31, 69.51", "gpu")).toBeNull();
    expect(parseHeaderLine("No devices were found", "gpu")).toBeNull();
    expect(parseHeaderLine("gpu_uuid, pid, process_name, used_gpu_memory [MiB]", "app")).toEqual(["gpu_uuid", "pid", "process_name", "used_gpu_memory"]);
    // a header without the key column is not one we can use
    expect(parseHeaderLine("name, memory.total [MiB]", "gpu")).toBeNull();
  });
});

describe("parseGpuCsv: GPU models", () => {
  it("8× H200, nounits", () => {
    const uuids = [
      "GPU-a44622e3-2296-6285-0a86-84d0f6c67900",
      "GPU-4f31bb83-f8dc-d0af-029e-bc4356e6afeb",
      "GPU-4e9e74b7-4977-f04d-3af3-ccfe5f570e90",
      "GPU-02dbe542-8a6f-11a4-7c2a-486b7d4e9092",
      "GPU-cb449822-5571-be90-8303-e7558da3ea66",
      "GPU-8e137fa6-c3d9-6980-7733-0d8df296756e",
      "GPU-d9337494-6060-1440-039f-4654245b5764",
      "GPU-28780eb0-24d5-1f13-59b8-ae5c23617a72",
    ];
    const rows = uuids.map(
      (u, i) =>
        `${i}, ${u}, NVIDIA H200, 00000000:${(0x18 + i * 0x10).toString(16).toUpperCase()}:00.0, 143771, ${i === 7 ? 58071 : 130004}, ${i === 7 ? 0 : 100}, ${40 + i}, ${i === 7 ? "118.20" : "650.31"}`,
    );
    const { gpus, strayLines } = parseGpuCsv([HEADER, ...rows].join("\n") + "\n");
    expect(strayLines).toEqual([]);
    expect(gpus).toHaveLength(8);
    expect(gpus[0]).toEqual({
      uuid: uuids[0],
      index: 0,
      name: "NVIDIA H200",
      pciBusId: "00000000:18:00.0",
      memoryTotalMiB: 143771,
      memoryUsedMiB: 130004,
      utilizationPct: 100,
      temperatureC: 40,
      powerW: 650.31,
    });
    expect(gpus[7]).toMatchObject({ index: 7, memoryUsedMiB: 58071, utilizationPct: 0, powerW: 118.2 });
  });

  it("H100 with units (no nounits) — idle shows 0 used, which is a real 0", () => {
    const text = `index, uuid, name, pci.bus_id, memory.total [MiB], memory.used [MiB], utilization.gpu [%], temperature.gpu, power.draw [W]
0, GPU-3a1f9e02-4c11-4b8a-9e2d-7f6b1c0a55e1, NVIDIA H100 80GB HBM3, 00000000:1B:00.0, 81559 MiB, 0 MiB, 0 %, 31, 69.51 W
1, GPU-7b2e0c14-8a33-4f9c-a1de-2c9d5e7f0b3a, NVIDIA H100 80GB HBM3, 00000000:3D:00.0, 81559 MiB, 79012 MiB, 97 %, 58, 512.06 W
`;
    const { gpus } = parseGpuCsv(text);
    expect(gpus.map((g) => [g.index, g.memoryTotalMiB, g.memoryUsedMiB, g.utilizationPct, g.powerW])).toEqual([
      [0, 81559, 0, 0, 69.51],
      [1, 81559, 79012, 97, 512.06],
    ]);
  });

  it("A100 and L4 with columns in another order plus extra columns we did not ask for", () => {
    const text = `timestamp, name, uuid, memory.used [MiB], memory.free [MiB], memory.total [MiB], index, driver_version, pci.bus_id, temperature.gpu, utilization.gpu [%], power.draw [W]
2025/06/01 12:00:00.123, NVIDIA A100-SXM4-80GB, GPU-11111111-2222-3333-4444-555555555555, 1024, 80896, 81920, 0, 550.54.15, 00000000:07:00.0, 35, 3, 61.20
2025/06/01 12:00:00.124, NVIDIA L4, GPU-66666666-7777-8888-9999-000000000000, 20000, 3034, 23034, 1, 550.54.15, 00000000:82:00.0, 48, 61, 52.11
`;
    const { gpus, strayLines } = parseGpuCsv(text);
    expect(strayLines).toEqual([]);
    expect(gpus[0]).toEqual({
      uuid: "GPU-11111111-2222-3333-4444-555555555555",
      index: 0,
      name: "NVIDIA A100-SXM4-80GB",
      pciBusId: "00000000:07:00.0",
      memoryTotalMiB: 81920,
      memoryUsedMiB: 1024,
      utilizationPct: 3,
      temperatureC: 35,
      powerW: 61.2,
    });
    expect(gpus[1]).toMatchObject({ name: "NVIDIA L4", memoryTotalMiB: 23034, memoryUsedMiB: 20000, index: 1 });
  });

  it("GB10 (unified memory): memory.* are [N/A] → null, other fields still read", () => {
    const text = `${HEADER}
0, GPU-a1b2c3d4-0000-1111-2222-333344445555, NVIDIA GB10, 0000000F:01:00.0, [N/A], [N/A], 12, 44, 11.30
`;
    const [g] = parseGpuCsv(text).gpus;
    expect(g.memoryTotalMiB).toBeNull();
    expect(g.memoryUsedMiB).toBeNull();
    expect(g.utilizationPct).toBe(12);
    expect(g.powerW).toBe(11.3);
  });

  it("MIG mode: utilization.gpu is [N/A], the parent GPU row still parses", () => {
    const text = `${HEADER}
0, GPU-5f0a0b1c-2d3e-4f50-6172-8394a5b6c7d8, NVIDIA A100-SXM4-40GB, 00000000:00:04.0, 40960, 13, [N/A], 29, 54.02
`;
    const [g] = parseGpuCsv(text).gpus;
    expect(g.utilizationPct).toBeNull();
    expect(g.memoryUsedMiB).toBe(13);
  });

  it("every kind of placeholder becomes null, never 0", () => {
    const cells = ["[Not Supported]", "[Unknown Error]", "[Insufficient Permissions]", "[Requested functionality has been deprecated]", "N/A", ""];
    const text = `${HEADER}
0, GPU-00000000-0000-0000-0000-000000000001, NVIDIA H100 PCIe, 00000000:01:00.0, ${cells[0]}, ${cells[1]}, ${cells[2]}, ${cells[3]}, ${cells[4]}
1, GPU-00000000-0000-0000-0000-000000000002, NVIDIA H100 PCIe, 00000000:02:00.0, 81559, ${cells[5]}, [Function Not Found], [GPU requires reset], [N/A]
`;
    const { gpus } = parseGpuCsv(text);
    expect(gpus).toHaveLength(2);
    for (const g of gpus) {
      expect(g.memoryUsedMiB).toBeNull();
      expect(g.utilizationPct).toBeNull();
      expect(g.temperatureC).toBeNull();
      expect(g.powerW).toBeNull();
    }
    expect(gpus[0].memoryTotalMiB).toBeNull();
    expect(gpus[1].memoryTotalMiB).toBe(81559);
  });

  it("alias queries print canonical headers (gpu_uuid,gpu_name,gpu_bus_id)", () => {
    const text = `uuid, name, pci.bus_id, memory.total [MiB], compute_mode
GPU-76aef7ff-372d-2432-b4b4-beca4d8d3400, Tesla P40, 00000000:00:06.0, 23040 MiB, Exclusive_Process
`;
    const [g] = parseGpuCsv(text).gpus;
    expect(g).toMatchObject({ uuid: "GPU-76aef7ff-372d-2432-b4b4-beca4d8d3400", name: "Tesla P40", index: null });
    // and an alias in the header itself is mapped too
    const aliased = parseGpuCsv(`gpu_uuid, gpu_name, memory.used [MiB]\nGPU-76aef7ff-372d-2432-b4b4-beca4d8d3400, Tesla P40, 7\n`);
    expect(aliased.gpus[0]).toMatchObject({ name: "Tesla P40", memoryUsedMiB: 7, memoryTotalMiB: null });
  });

  it("newer drivers' power.draw.instant stands in when power.draw is absent", () => {
    const text = `uuid, power.draw.average [W], power.draw.instant [W]\nGPU-76aef7ff-372d-2432-b4b4-beca4d8d3400, 300.00, 310.50\n`;
    expect(parseGpuCsv(text).gpus[0].powerW).toBe(310.5);
  });

  it("noheader output parses with the columns the query asked for", () => {
    const text = "3, GPU-3a1f9e02-4c11-4b8a-9e2d-7f6b1c0a55e1, NVIDIA H100 80GB HBM3, 00000000:1B:00.0, 81559, 100, 1, 30, 70.00\n";
    expect(parseGpuCsv(text).gpus).toEqual([]); // no header, no assumption → nothing trusted
    const { gpus } = parseGpuCsv(text, GPU_QUERY_FIELDS.slice(0, 9));
    expect(gpus[0]).toMatchObject({ index: 3, memoryUsedMiB: 100 });
  });

  it("utilization.memory, power.limit, clocks.sm and clocks.max.sm; [N/A] (GB10) is null, never 0", () => {
    const header = `${HEADER}, utilization.memory [%], power.limit [W], clocks.sm [MHz], clocks.max.sm [MHz]`;
    expect(parseHeaderLine(header, "gpu")).toEqual([...GPU_QUERY_FIELDS]);
    const text = `${header}
0, GPU-3a1f9e02-4c11-4b8a-9e2d-7f6b1c0a55e1, NVIDIA H200, 00000000:1B:00.0, 143771, 70000, 87, 61, 512.30, 43, 700.00, 1755, 1980
1, GPU-7b2e0c14-8a33-4f9c-a1de-2c9d5e7f0b3a, NVIDIA GB10, 0000000F:01:00.0, [N/A], [N/A], 12, 45, [N/A], [N/A], [N/A], 2405, [N/A]
`;
    const { gpus } = parseGpuCsv(text);
    expect(gpus[0]).toMatchObject({ utilizationPct: 87, powerW: 512.3, powerLimitW: 700, memoryUtilizationPct: 43, smClockMHz: 1755, smClockMaxMHz: 1980 });
    expect(gpus[1]).toMatchObject({ powerW: null, powerLimitW: null, memoryUtilizationPct: null, smClockMHz: 2405, smClockMaxMHz: null });
    // an older query without them: no such keys (not null, not 0)
    const old = parseGpuCsv(`${HEADER}\n0, GPU-3a1f9e02-4c11-4b8a-9e2d-7f6b1c0a55e1, NVIDIA H200, 00000000:1B:00.0, 143771, 5, 0, 31, 69.51\n`).gpus[0]!;
    expect("smClockMHz" in old).toBe(false);
  });

  it("stray lines and error texts are kept aside, rows around them still parse", () => {
    const text = `${HEADER}
0, GPU-3a1f9e02-4c11-4b8a-9e2d-7f6b1c0a55e1, NVIDIA H100 80GB HBM3, 00000000:1B:00.0, 81559, 5, 0, 31, 69.51
Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error
WARNING: infoROM is corrupted at gpu 0000:3D:00.0
1, GPU-7b2e0c14-8a33-4f9c-a1de-2c9d5e7f0b3a, NVIDIA H100 80GB HBM3, 00000000:3D:00.0, 81559, 6, 0, 32, 70.00
1, truncated
`;
    const { gpus, strayLines } = parseGpuCsv(text);
    expect(gpus.map((g) => g.memoryUsedMiB)).toEqual([5, 6]);
    expect(strayLines).toEqual([
      "Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error",
      "WARNING: infoROM is corrupted at gpu 0000:3D:00.0",
      "1, truncated",
    ]);
  });

  it("error-only output yields no GPUs", () => {
    for (const text of [
      "No devices were found\n",
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n\n",
      "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.90\n",
      "",
    ]) {
      expect(parseGpuCsv(text).gpus).toEqual([]);
    }
  });

  it("CRLF line endings", () => {
    const text = `${HEADER}\r\n0, GPU-3a1f9e02-4c11-4b8a-9e2d-7f6b1c0a55e1, NVIDIA H100 80GB HBM3, 00000000:1B:00.0, 81559, 5, 0, 31, 69.51\r\n`;
    expect(parseGpuCsv(text).gpus[0].powerW).toBe(69.51);
  });
});

describe("parseComputeAppsCsv", () => {
  const APP_HEADER = "gpu_uuid, pid, process_name, used_gpu_memory [MiB]";

  it("reads rows (nounits and with units)", () => {
    const text = `${APP_HEADER}
GPU-a44622e3-2296-6285-0a86-84d0f6c67900, 1328667, /usr/local/bin/python3.10, 130004
GPU-4e9e74b7-4977-f04d-3af3-ccfe5f570e90, 1425258, VLLM::EngineCore, 105842 MiB
`;
    expect(parseComputeAppsCsv(text).apps).toEqual([
      { gpuUuid: "GPU-a44622e3-2296-6285-0a86-84d0f6c67900", pid: 1328667, processName: "/usr/local/bin/python3.10", usedMiB: 130004 },
      { gpuUuid: "GPU-4e9e74b7-4977-f04d-3af3-ccfe5f570e90", pid: 1425258, processName: "VLLM::EngineCore", usedMiB: 105842 },
    ]);
  });

  it("no processes: only the header, or nothing at all", () => {
    expect(parseComputeAppsCsv(`${APP_HEADER}\n`)).toEqual({ apps: [], strayLines: [] });
    expect(parseComputeAppsCsv("")).toEqual({ apps: [], strayLines: [] });
  });

  it("process names with `, ` survive (parsed from both ends)", () => {
    const text = `${APP_HEADER}
GPU-a44622e3-2296-6285-0a86-84d0f6c67900, 4242, /opt/chrome/chrome --type=gpu-process --flags=a,b, c --lang=en, 312
`;
    const [app] = parseComputeAppsCsv(text).apps;
    expect(app.pid).toBe(4242);
    expect(app.processName).toBe("/opt/chrome/chrome --type=gpu-process --flags=a,b, c --lang=en");
    expect(app.usedMiB).toBe(312);
  });

  it("commas in names also survive when process_name is not the last-but-one column", () => {
    const index = columnIndex(["pid", "process_name", "gpu_uuid", "used_gpu_memory"]);
    const app = parseComputeAppRow("77, a, b, c, GPU-a44622e3-2296-6285-0a86-84d0f6c67900, 10", index);
    expect(app).toEqual({ gpuUuid: "GPU-a44622e3-2296-6285-0a86-84d0f6c67900", pid: 77, processName: "a, b, c", usedMiB: 10 });
  });

  it("alias header (used_memory printed as used_gpu_memory), extra columns, [N/A] memory, [Not Found] name", () => {
    const text = `timestamp, gpu_name, gpu_uuid, pid, process_name, used_gpu_memory [MiB]
2025/06/01 12:00:00.000, NVIDIA GB10, GPU-a1b2c3d4-0000-1111-2222-333344445555, 9001, [Not Found], [N/A]
`;
    expect(parseComputeAppsCsv(text).apps).toEqual([{ gpuUuid: "GPU-a1b2c3d4-0000-1111-2222-333344445555", pid: 9001, processName: "", usedMiB: null }]);
  });

  it("MIG: apps carry the parent GPU's uuid", () => {
    const text = `${APP_HEADER}
GPU-5f0a0b1c-2d3e-4f50-6172-8394a5b6c7d8, 100, python, 4000
GPU-5f0a0b1c-2d3e-4f50-6172-8394a5b6c7d8, 101, python, 9000
`;
    const { apps } = parseComputeAppsCsv(text);
    expect(apps.map((a) => [a.gpuUuid, a.pid, a.usedMiB])).toEqual([
      ["GPU-5f0a0b1c-2d3e-4f50-6172-8394a5b6c7d8", 100, 4000],
      ["GPU-5f0a0b1c-2d3e-4f50-6172-8394a5b6c7d8", 101, 9000],
    ]);
  });

  it("noheader with assumed columns; junk rows become stray lines", () => {
    const text = "GPU-a44622e3-2296-6285-0a86-84d0f6c67900, 12, python3, 100\nNo running processes found\nGPU-x, notapid, y, 1\n";
    const { apps, strayLines } = parseComputeAppsCsv(text, COMPUTE_APP_QUERY_FIELDS);
    expect(apps).toHaveLength(1);
    expect(apps[0].usedMiB).toBe(100);
    expect(strayLines).toEqual(["No running processes found", "GPU-x, notapid, y, 1"]);
  });
});

describe("describeNvidiaSmiFailure", () => {
  it("names each known failure", () => {
    expect(describeNvidiaSmiFailure({ spawnErrorCode: "ENOENT", path: "/opt/nvidia-smi" })).toBe("nvidia-smi not found (/opt/nvidia-smi): binary missing");
    expect(describeNvidiaSmiFailure({ exitCode: 6, output: "No devices were found\n" })).toBe(
      "nvidia-smi: no NVIDIA GPU found (exit code 6): No devices were found",
    );
    expect(
      describeNvidiaSmiFailure({
        exitCode: 9,
        output:
          "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n",
      }),
    ).toMatch(/^nvidia-smi: cannot talk to the NVIDIA driver .*\(exit code 9\): NVIDIA-SMI has failed/);
    expect(
      describeNvidiaSmiFailure({ exitCode: 18, output: "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.90\n" }),
    ).toBe(
      "nvidia-smi: driver/library version mismatch (driver updated without reboot?) (exit code 18): Failed to initialize NVML: Driver/library version mismatch",
    );
    expect(describeNvidiaSmiFailure({ exitCode: 15, output: "Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error\n" })).toMatch(
      /GPU is inaccessible.*exit code 15.*0000:0B:00.0/,
    );
    expect(describeNvidiaSmiFailure({ exitCode: 15, output: "" })).toBe(
      "nvidia-smi: a GPU has fallen off the bus or has otherwise become inaccessible (exit code 15)",
    );
    expect(describeNvidiaSmiFailure({ signal: "SIGKILL" })).toBe("nvidia-smi killed by SIGKILL");
    expect(describeNvidiaSmiFailure({ exitCode: 1, output: "something odd\n" })).toBe("nvidia-smi exit code 1: something odd");
  });

  it("finds the field a driver rejects", () => {
    expect(invalidQueryField('Field "power.draw" is not a valid field to query.\n')).toBe("power.draw");
    expect(invalidQueryField("No devices were found")).toBeNull();
  });
});
