import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { columnIndex, parseGpuCsv, parseHeaderLine } from "./csv";
import { GPU_HEALTH_QUERY_FIELDS, parseEccCount, parseThrottleReasons } from "./health";
import { isUnifiedMemoryGpu, meminfoReader, parseMeminfo } from "./memoryPool";
import { killIfSame } from "./processControl";

describe("clock event (throttle) reasons", () => {
  it("decodes the hex bitmask nvidia-smi prints, unknown bits by number", () => {
    expect(parseThrottleReasons("0x0000000000000000")).toEqual([]);
    expect(parseThrottleReasons("0x0000000000000004")).toEqual(["sw_power_cap"]);
    expect(parseThrottleReasons("0x0000000000000045")).toEqual(["gpu_idle", "sw_power_cap", "hw_thermal_slowdown"]);
    expect(parseThrottleReasons("0x0000000000000088")).toEqual(["hw_slowdown", "hw_power_brake_slowdown"]);
    expect(parseThrottleReasons("0x0000000000001001")).toEqual(["gpu_idle", "bit_0x1000"]);
  });
  it("placeholders are not reported, never 'none'", () => {
    for (const cell of ["[N/A]", "[Not Supported]", "", "Active", undefined]) expect(parseThrottleReasons(cell)).toBeNull();
  });
});

describe("ECC counts", () => {
  it("integers are counts; [N/A] (ECC off) and junk are null", () => {
    expect(parseEccCount("0")).toBe(0);
    expect(parseEccCount(" 12 ")).toBe(12);
    for (const cell of ["[N/A]", "[Not Supported]", "-1", "1.5", undefined]) expect(parseEccCount(cell)).toBeNull();
  });
});

describe("health columns in --query-gpu rows", () => {
  const header =
    "index, uuid, name, memory.total [MiB], memory.used [MiB], clocks_event_reasons.active, ecc.errors.corrected.volatile.total, ecc.errors.uncorrected.volatile.total";
  it("parse into the reading; the old throttle name reads the same", () => {
    const text = `${header}\n0, GPU-aaaa-1, NVIDIA H200, 143771, 10, 0x0000000000000020, 3, 0\n`;
    expect(parseGpuCsv(text).gpus[0]).toMatchObject({ throttleReasons: ["sw_thermal_slowdown"], eccCorrectedVolatile: 3, eccUncorrectedVolatile: 0 });
    const old = header.replace("clocks_event_reasons", "clocks_throttle_reasons");
    expect(parseHeaderLine(old, "gpu")).toContain("clocks_event_reasons.active");
  });
  it("GB10 / consumer cards: [N/A] memory and ECC are null, never 0; without the columns the keys are absent", () => {
    const text = `${header}\n0, GPU-gb10-1, NVIDIA GB10, [N/A], [N/A], 0x0000000000000001, [N/A], [N/A]\n`;
    const g = parseGpuCsv(text).gpus[0]!;
    expect(g).toMatchObject({
      memoryTotalMiB: null,
      memoryUsedMiB: null,
      eccCorrectedVolatile: null,
      eccUncorrectedVolatile: null,
      throttleReasons: ["gpu_idle"],
    });
    expect(isUnifiedMemoryGpu(g)).toBe(true);
    const plain = parseGpuCsv("index, uuid, memory.used [MiB]\n0, GPU-aaaa-1, 5\n").gpus[0]!;
    expect(Object.keys(plain)).not.toContain("throttleReasons");
    expect(columnIndex([...GPU_HEALTH_QUERY_FIELDS]).columns).toHaveLength(3);
  });
});

describe("/proc/meminfo", () => {
  it("MemTotal and MemAvailable in MiB", () => {
    expect(parseMeminfo("MemTotal:       125441028 kB\nMemFree:         1000 kB\nMemAvailable:   98765432 kB\n")).toEqual({
      totalMiB: 122501,
      availableMiB: 96451,
    });
    expect(parseMeminfo("MemTotal: 1 kB\n")).toBeNull();
  });
  it("reads a proc root", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "gpudeck-proc-"));
    try {
      writeFileSync(path.join(dir, "meminfo"), "MemTotal: 2048 kB\nMemAvailable: 1024 kB\n");
      expect(await meminfoReader(dir)()).toEqual({ totalMiB: 2, availableMiB: 1 });
      expect(await meminfoReader(path.join(dir, "nope"))()).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("killIfSame", () => {
  const procs = (startedAtMs: number | undefined, state: "sleeping" | "gone" = "sleeping") => ({
    inspect: async (pid: number) => ({ info: { pid, state, cmdline: [], startedAtMs }, unit: null }),
  });
  it("signals only the process that started when the caller was told", async () => {
    const sent: number[] = [];
    expect(await killIfSame(procs(1000), 42, 1000, (p) => sent.push(p))).toEqual({ killed: true });
    expect(await killIfSame(procs(9000), 42, 1000, (p) => sent.push(p))).toMatchObject({
      killed: false,
      reason: expect.stringMatching(/now a different process/),
    });
    expect(await killIfSame(procs(1000, "gone"), 42, 1000, (p) => sent.push(p))).toMatchObject({
      killed: false,
      reason: expect.stringMatching(/gone already/),
    });
    expect(await killIfSame(procs(undefined), 42, 1000, (p) => sent.push(p))).toMatchObject({ killed: false });
    expect(sent).toEqual([42]);
    const eperm = Object.assign(new Error("EPERM"), { code: "EPERM" });
    expect(
      await killIfSame(procs(1000), 42, 1000, () => {
        throw eperm;
      }),
    ).toMatchObject({ killed: false, reason: expect.stringMatching(/not permitted/) });
  });
});
