/**
 * nvidia-smi: does it run, how long one sample takes (the agent samples every second), and
 * persistence mode. Without persistence mode the driver tears a GPU down when its last client
 * exits, so every nvidia-smi call and every engine start pays the initialisation again (seconds
 * per GPU on large hosts); see shared notes on nvidia-smi.
 */
import type { CheckResult, ExecResult, Runner } from "../types";

/** nvidia-smi's exit codes (its man page), for messages. */
const EXIT_MEANING: Record<number, string> = {
  2: "a bad argument or field",
  3: "the operation is not supported",
  4: "no permission",
  6: "no GPU found",
  9: "the NVIDIA driver is not loaded",
  12: "the NVML library was not found",
  14: "a GPU's infoROM is corrupt",
  15: "a GPU fell off the bus",
  18: "the driver and its library are of different versions (reboot or reload the driver)",
};

export const NVIDIA_SMI_TIMEOUT_MS = 30_000;
/** above this one sample is slow enough to matter at a 1 s sampling period */
export const SLOW_SAMPLE_MS = 2000;

const SAMPLE_ARGS = ["--query-gpu=index,uuid,name,memory.used,memory.total", "--format=csv,noheader,nounits"];

function firstLine(r: ExecResult): string {
  return (r.stderr.trim() || r.stdout.trim()).split("\n")[0]?.slice(0, 300) ?? "";
}

/** Why a run failed, in words, or null when it succeeded. */
function failure(cmd: string, r: ExecResult, timeoutMs: number): string | null {
  if (r.spawnError) return `${cmd} cannot be run: ${r.spawnError}`;
  if (r.timedOut) return `${cmd} did not answer within ${timeoutMs / 1000} s (a wedged driver leaves it hanging)`;
  if (r.code !== 0) {
    const meaning = r.code !== null && EXIT_MEANING[r.code] ? ` (${EXIT_MEANING[r.code]})` : "";
    return `${cmd} exited ${r.code ?? "on a signal"}${meaning}: ${firstLine(r) || "no output"}`;
  }
  return null;
}

export interface NvidiaSmiOutcome {
  result: CheckResult;
  /** true when it ran: the persistence check can follow */
  ran: boolean;
}

export interface GpuCheckLimits {
  timeoutMs: number;
  slowMs: number;
}

const LIMITS: GpuCheckLimits = { timeoutMs: NVIDIA_SMI_TIMEOUT_MS, slowMs: SLOW_SAMPLE_MS };

export async function checkNvidiaSmi(runner: Runner, nvidiaSmi: string, limits: GpuCheckLimits = LIMITS): Promise<NvidiaSmiOutcome> {
  const r = await runner.run(nvidiaSmi, SAMPLE_ARGS, { timeoutMs: limits.timeoutMs });
  const why = failure(nvidiaSmi, r, limits.timeoutMs);
  if (why) {
    const fix = r.spawnError?.startsWith("ENOENT")
      ? "install the NVIDIA driver utilities, or set agent.nvidia_smi (GPUDECK_NVIDIA_SMI) to its path"
      : "run the same command by hand (nvidia-smi -q shows more); check the driver with dmesg and `systemctl status nvidia-persistenced`";
    return { result: { id: "nvidia-smi", status: "error", detail: why, fix }, ran: false };
  }
  const gpus = r.stdout.split("\n").filter((l) => l.trim()).length;
  const took = `one sample took ${Math.round(r.ms)} ms`;
  if (gpus === 0)
    return {
      result: {
        id: "nvidia-smi",
        status: "error",
        detail: `${nvidiaSmi} ran but listed no GPU (${took})`,
        fix: "check that the GPUs are visible: nvidia-smi -L",
      },
      ran: true,
    };
  if (r.ms > limits.slowMs) {
    return {
      result: {
        id: "nvidia-smi",
        status: "warn",
        detail: `${gpus} GPU${gpus === 1 ? "" : "s"}, but ${took}: the agent samples every second`,
        fix: "enable persistence mode (see below), or raise agent.gpu_interval_ms",
      },
      ran: true,
    };
  }
  return { result: { id: "nvidia-smi", status: "ok", detail: `${gpus} GPU${gpus === 1 ? "" : "s"}; ${took}` }, ran: true };
}

export async function checkPersistenceMode(runner: Runner, nvidiaSmi: string, limits: GpuCheckLimits = LIMITS): Promise<CheckResult> {
  const r = await runner.run(nvidiaSmi, ["--query-gpu=index,persistence_mode", "--format=csv,noheader"], { timeoutMs: limits.timeoutMs });
  const why = failure(nvidiaSmi, r, limits.timeoutMs);
  if (why) return { id: "persistence mode", status: "warn", detail: `cannot tell: ${why}` };
  const off: string[] = [];
  const unknown: string[] = [];
  for (const line of r.stdout.split("\n").filter((l) => l.trim())) {
    const [index, mode] = line.split(",").map((c) => c.trim());
    if (/^enabled$/i.test(mode ?? "")) continue;
    if (/^disabled$/i.test(mode ?? "")) off.push(index ?? "?");
    else unknown.push(index ?? "?");
  }
  if (off.length > 0) {
    return {
      id: "persistence mode",
      status: "warn",
      detail: `off on GPU ${off.join(", ")}: each nvidia-smi call and each engine start initialises the GPU again (seconds per GPU)`,
      fix: "systemctl enable --now nvidia-persistenced (or nvidia-smi -pm 1, until the next reboot)",
    };
  }
  if (unknown.length > 0) return { id: "persistence mode", status: "ok", detail: `not reported for GPU ${unknown.join(", ")} (not supported there)` };
  return { id: "persistence mode", status: "ok", detail: "on for every GPU" };
}
