/**
 * Test-side helpers for the fake nvidia-smi (`e2e/fakes/nvidia-smi`): its path, the shape of
 * its state file, and atomic writes of that file (the fake re-reads it every loop round).
 */
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const FAKE_NVIDIA_SMI_PATH = fileURLToPath(new URL("./nvidia-smi", import.meta.url));

export interface FakeGpu {
  uuid: string;
  index: number;
  name?: string;
  pciBusId?: string;
  memoryTotalMiB?: number | null;
  /** memory.used when nothing is allocated (driver/context overhead) */
  baseUsedMiB?: number;
  /** fixes memory.used regardless of allocations */
  memoryUsedMiB?: number | null;
  memoryReservedMiB?: number;
  utilizationPct?: number | null;
  temperatureC?: number | null;
  powerW?: number | null;
  /** power.limit (default 700 W), utilization.memory (default 0 %), clocks.sm and clocks.max.sm (default 1980 MHz); null prints [N/A] */
  powerLimitW?: number | null;
  utilizationMemoryPct?: number | null;
  smClockMHz?: number | null;
  smClockMaxMHz?: number | null;
  /** field → text printed instead of its value (e.g. { "memory.used": "[N/A]" }) */
  cells?: Record<string, string>;
  /** print "Unable to determine the device handle …" instead of this GPU's row */
  lost?: boolean;
  mig?: { profile: string; uuid: string }[];
  /** clocks_event_reasons.active bits (default 0: none) */
  throttleMask?: number;
  /** ecc.errors.*.volatile.total (default 0; null prints [N/A], as with ECC off) */
  eccCorrectedVolatile?: number | null;
  eccUncorrectedVolatile?: number | null;
}

export interface FakeAllocation {
  pid: number;
  uuid: string;
  usedMiB: number | null;
  processName?: string;
  /** /proc/<pid>/stat start time, to tell a reused pid apart (set by --fake-alloc) */
  startTicks?: number;
  releaseDelayMs?: number;
  cells?: Record<string, string>;
}

export interface FakeError {
  exitCode: number;
  message: string;
  stream?: "stdout" | "stderr";
}

export type FakeMode = "ok" | "hang" | "error";

export interface FakeNvidiaSmiState {
  gpus: FakeGpu[];
  allocations: FakeAllocation[];
  releaseDelayMs?: number;
  listExitedHolders?: boolean;
  mode?: FakeMode;
  appsMode?: FakeMode;
  error?: FakeError;
  appsError?: FakeError;
  strayLines?: string[];
  loopExitAfterRounds?: number;
  loopExitCode?: number;
  queryDelayMs?: number;
  driverVersion?: string;
  /** query fields this "driver" does not know: `Field "x" is not a valid field to query.`, exit 2 */
  rejectFields?: string[];
  /** tests: a fake holds the state lock this long, so it can be killed while holding it */
  lockHoldMs?: number;
}

/** Error texts of the real binary, with the exit codes they come with. */
export const NVIDIA_SMI_ERRORS = {
  noDevices: { exitCode: 6, message: "No devices were found" },
  driverNotLoaded: {
    exitCode: 9,
    message:
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n",
  },
  versionMismatch: {
    exitCode: 18,
    message: "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.90",
  },
  fellOffTheBus: {
    exitCode: 15,
    message: "Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error",
  },
} satisfies Record<string, FakeError>;

/** A GPU with sensible defaults: `fakeGpu(0)` is an idle H200. */
export function fakeGpu(index: number, over: Partial<FakeGpu> = {}): FakeGpu {
  const hex = (index + 1).toString(16).padStart(12, "0");
  return {
    uuid: `GPU-5e1f0c2a-7b3d-4e8f-9a01-${hex}`,
    index,
    name: "NVIDIA H200",
    pciBusId: `00000000:${(0x18 + index * 0x10).toString(16).toUpperCase().padStart(2, "0")}:00.0`,
    memoryTotalMiB: 143771,
    baseUsedMiB: 0,
    utilizationPct: 0,
    temperatureC: 30 + index,
    powerW: 75.5,
    ...over,
  };
}

/** A state file in a fresh temp directory; `dispose()` removes both. */
export class FakeNvidiaSmiStateFile {
  readonly dir: string;
  readonly path: string;

  constructor(initial: FakeNvidiaSmiState, dir?: string) {
    this.dir = dir ?? mkdtempSync(path.join(os.tmpdir(), "gpudeck-fake-smi-"));
    this.path = path.join(this.dir, "state.json");
    this.write(initial);
  }

  /** Environment for a spawned fake. */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return { ...process.env, FAKE_NVIDIA_SMI_STATE: this.path, ...extra };
  }

  read(): FakeNvidiaSmiState {
    return JSON.parse(readFileSync(this.path, "utf8")) as FakeNvidiaSmiState;
  }

  write(state: FakeNvidiaSmiState): void {
    writeJsonAtomic(this.path, state);
  }

  update(change: (s: FakeNvidiaSmiState) => void): FakeNvidiaSmiState {
    const s = this.read();
    change(s);
    this.write(s);
    return s;
  }

  /** When the fake first saw each allocating process dead (pid@startTicks → ms). */
  deaths(): Record<string, number> {
    try {
      return JSON.parse(readFileSync(`${this.path}.deaths.json`, "utf8")) as Record<string, number>;
    } catch {
      return {};
    }
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export function writeJsonAtomic(file: string, value: unknown): void {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(tmp, file);
}
