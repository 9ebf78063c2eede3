/**
 * The demo host's units. They replay the incident gpudeck exists for, plus the usual ways a
 * GPU service misbehaves. Durations are in milliseconds at speed 1.
 */
import type { SimWorld } from "./world";

export type PreBehavior = { kind: "wait-gpu-free"; maxUsedMiB: number; pollMs: number } | { kind: "fail"; afterMs: number; exitCode: number; message: string };

export type MainBehavior =
  | {
      kind: "serve";
      /** GPU indexes, one worker process per GPU (vLLM tensor-parallel workers) */
      gpuIndexes: number[];
      perGpuMiB: number;
      loadMs: number;
      busyPct: number;
      workerName: (rank: number) => string;
    }
  | { kind: "crash"; afterMs: number; exitCode: number; lines: string[]; gpuIndexes: number[]; perGpuMiB: number };

export interface SimUnitSpec {
  name: string;
  description: string;
  fragmentPath: string;
  execStartPre: string[][];
  execStart: string[];
  execStopPost: string[][];
  restart: "no" | "on-failure";
  restartMs: number;
  startLimitBurst: number;
  startLimitIntervalMs: number;
  timeoutStartMs: number;
  timeoutStopMs: number;
  /** time the main process takes to exit after SIGTERM */
  stopMs: number;
  pre: PreBehavior | null;
  main: MainBehavior;
  /** initial condition when the simulator starts */
  initially: "running" | "failed-pre" | "crash-looping" | "inactive";
  /** how long ago the initial state began */
  initialAgeMs: number;
  /** Requires=/BindsTo=/Requisite= (none of the demo units has any) */
  requires?: string[];
}

const WAIT_FOR_GPU_SCRIPT =
  "until nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | awk '$1 > 20000 {busy=1} END {exit busy}'; do echo \"GPU memory still in use, waiting\"; sleep 1; done";

/**
 * The incident host has 12 GPUs: Kimi alone on GPUs 0–7 (so a GPU-aware restart of it has no
 * other tenant to refuse beside: it waits for the drain and starts), the other services and the
 * notebook on GPUs 8–11.
 */
export const INCIDENT_GPU_COUNT = 12;

export function demoUnits(world: SimWorld): SimUnitSpec[] {
  const kimiGpus = world.gpus.slice(0, 8).map((g) => g.index);
  return [
    {
      name: "vllm-kimi-k25.service",
      description: "vLLM: Kimi K2.5 (TP=8)",
      fragmentPath: "/etc/systemd/system/vllm-kimi-k25.service",
      execStartPre: [["/bin/bash", "-c", WAIT_FOR_GPU_SCRIPT]],
      execStart: ["/opt/vllm/bin/vllm", "serve", "/models/kimi-k2.5", "--tensor-parallel-size", "8", "--gpu-memory-utilization", "0.53", "--port", "8000"],
      execStopPost: [],
      restart: "no",
      restartMs: 10_000,
      startLimitBurst: 5,
      startLimitIntervalMs: 10_000,
      timeoutStartMs: 600_000,
      timeoutStopMs: 90_000,
      stopMs: 2500,
      pre: { kind: "wait-gpu-free", maxUsedMiB: 20_000, pollMs: 1000 },
      main: {
        kind: "serve",
        gpuIndexes: kimiGpus,
        perGpuMiB: 76_800,
        loadMs: 18_000,
        busyPct: 82,
        workerName: (rank) => `VLLM::Worker_TP${rank}`,
      },
      initially: "running",
      initialAgeMs: 3 * 3600_000 + 17 * 60_000,
    },
    {
      name: "vllm-embed-small.service",
      description: "vLLM: bge-small embeddings",
      fragmentPath: "/etc/systemd/system/vllm-embed-small.service",
      execStartPre: [],
      execStart: ["/opt/vllm/bin/vllm", "serve", "/models/bge-small-en-v1.5", "--task", "embed", "--port", "8010"],
      execStopPost: [],
      restart: "on-failure",
      restartMs: 5000,
      startLimitBurst: 5,
      startLimitIntervalMs: 10_000,
      timeoutStartMs: 90_000,
      timeoutStopMs: 90_000,
      stopMs: 800,
      pre: null,
      main: {
        kind: "serve",
        gpuIndexes: [8],
        perGpuMiB: 9_216,
        loadMs: 4000,
        busyPct: 14,
        workerName: () => "VLLM::EngineCore",
      },
      initially: "running",
      initialAgeMs: 26 * 3600_000,
    },
    {
      name: "vllm-qwen-draft.service",
      description: "vLLM: Qwen3 draft model",
      fragmentPath: "/etc/systemd/system/vllm-qwen-draft.service",
      execStartPre: [],
      execStart: ["/opt/vllm/bin/vllm", "serve", "/models/qwen3-1.7b", "--port", "8020", "--gpu-memory-utilization", "0.3"],
      execStopPost: [],
      restart: "on-failure",
      restartMs: 4000,
      startLimitBurst: 4,
      startLimitIntervalMs: 60_000,
      timeoutStartMs: 90_000,
      timeoutStopMs: 90_000,
      stopMs: 500,
      pre: null,
      main: {
        kind: "crash",
        afterMs: 3500,
        exitCode: 1,
        gpuIndexes: [9],
        perGpuMiB: 3_100,
        lines: [
          "INFO Loading model weights took 3.1 GiB",
          "ERROR torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 43.12 GiB. GPU 9 has a total capacity of 140.4 GiB of which 58.9 GiB is free.",
        ],
      },
      initially: "crash-looping",
      initialAgeMs: 0,
    },
    {
      name: "vllm-llama-70b.service",
      description: "vLLM: Llama 3.3 70B",
      fragmentPath: "/etc/systemd/system/vllm-llama-70b.service",
      execStartPre: [["/usr/local/bin/check-model-weights", "/models/llama-3.3-70b"]],
      execStart: ["/opt/vllm/bin/vllm", "serve", "/models/llama-3.3-70b", "--tensor-parallel-size", "2", "--port", "8030"],
      execStopPost: [],
      restart: "no",
      restartMs: 100,
      startLimitBurst: 5,
      startLimitIntervalMs: 10_000,
      timeoutStartMs: 300_000,
      timeoutStopMs: 90_000,
      stopMs: 1000,
      pre: {
        kind: "fail",
        afterMs: 1200,
        exitCode: 2,
        message: "check-model-weights: /models/llama-3.3-70b/config.json: No such file or directory",
      },
      main: { kind: "serve", gpuIndexes: [10, 11], perGpuMiB: 70_000, loadMs: 10_000, busyPct: 60, workerName: (r) => `VLLM::Worker_TP${r}` },
      initially: "failed-pre",
      initialAgeMs: 42 * 60_000,
    },
  ];
}
