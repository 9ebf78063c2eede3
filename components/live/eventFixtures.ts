/** Builders for tests: readiness, GPU-aware operations and GPU faults as the agent reports them. */
import type { GpuFault } from "@/server/contract/faults";
import type { Operation, OperationStep } from "@/server/contract/operations";
import type { Readiness } from "@/server/contract/readiness";

export function readiness(state: Readiness["state"], extra: Partial<Readiness> = {}): Readiness {
  return { state, engine: "vllm", stage: null, progress: null, reason: null, sinceMs: 1_000, probe: null, models: [], ...extra };
}

export function operation(step: OperationStep, extra: Partial<Operation> = {}): Operation {
  return {
    id: "b1-o1",
    host: "gpu-a",
    unit: "a.service",
    kind: "restart",
    step,
    heldMiB: 0,
    pids: [],
    message: "",
    atMs: 10_000,
    createdAtMs: 10_000,
    deadlineMs: 610_000,
    timeoutMs: 600_000,
    timeoutSource: "unit",
    user: "ada",
    role: "admin",
    reason: null,
    gpus: [],
    foreign: [],
    pool: null,
    jobId: null,
    steps: [{ step, atMs: 10_000, heldMiB: 0, pids: [], message: "" }],
    ...extra,
  };
}

export function fault(id: string, extra: Partial<GpuFault> = {}): GpuFault {
  return {
    id,
    kind: "xid",
    code: 79,
    title: "GPU has fallen off the bus",
    meaning: "The GPU stopped answering on PCIe.",
    advice: "Drain the host and reset the GPU.",
    resetRequired: true,
    severity: "critical",
    atMs: 5_000,
    pci: "0000:3b:00",
    gpuUuid: "GPU-0",
    gpuIndex: 0,
    pid: 4321,
    processName: "python3",
    unit: "a.service",
    text: "GPU has fallen off the bus.",
    ...extra,
  };
}
