/**
 * A GPU-aware restart ("restart when its GPUs are free") as the unit page shows it: its steps in
 * order with what each is (done, now, skipped, still to come), what its last run still holds per
 * GPU, the time left to the deadline and whether Cancel applies. Pure, so the wording is tested.
 */
import { formatIndexList, formatMiB } from "@/server/contract/format";
import { isFinalOperationStep, type Operation, type OperationGpu, type OperationStep } from "@/server/contract/operations";

export const STEP_LABEL: Record<OperationStep, string> = {
  stopping: "stopping",
  "waiting-for-gpus": "waiting for its GPUs",
  starting: "starting",
  started: "started",
  failed: "failed",
  "timed-out": "timed out",
  canceled: "canceled",
};

/** done: passed; current: in it now; skipped: not needed (e.g. no stop: it was stopped already); pending: to come; not-reached: ended before it. */
export type StepStatus = "done" | "current" | "skipped" | "pending" | "not-reached" | "failed";

export interface StepView {
  step: OperationStep;
  label: string;
  status: StepStatus;
  /** when it began; null when it did not (yet) */
  atMs: number | null;
  /** how long it took, or has taken so far */
  durationMs: number | null;
}

export type OperationTone = "ok" | "busy" | "bad" | "idle";

export interface OperationView {
  steps: StepView[];
  final: boolean;
  tone: OperationTone;
  /** ms to the deadline while stopping or waiting (it bounds those two); null otherwise */
  timeLeftMs: number | null;
  cancellable: boolean;
  /** "GPU 3: 12.0 GiB · PIDs 4821, 4822 · exited 4820" per GPU still holding something */
  gpuLines: string[];
  /** MiB held when the wait began, for "falling from …" */
  heldAtWaitStartMiB: number | null;
}

const PATH: readonly OperationStep[] = ["stopping", "waiting-for-gpus", "starting"];

export function operationTone(step: OperationStep): OperationTone {
  if (step === "started") return "ok";
  if (step === "failed" || step === "timed-out") return "bad";
  return step === "canceled" ? "idle" : "busy";
}

/** "GPU 3: 12.0 GiB · PIDs 4821, 4822 · exited 4820"; null for a GPU that holds nothing any more. */
export function gpuLine(g: OperationGpu): string | null {
  if (g.heldMiB <= 0 && g.pids.length === 0 && g.exitedPids.length === 0) return null;
  const parts = [`GPU ${g.index ?? g.uuid}: ${formatMiB(g.heldMiB)}`];
  if (g.pids.length > 0) parts.push(`${g.pids.length === 1 ? "PID" : "PIDs"} ${g.pids.join(", ")}`);
  if (g.exitedPids.length > 0) parts.push(`exited ${g.exitedPids.join(", ")} (memory draining)`);
  if (g.unexplainedMiB > 0) parts.push(`${formatMiB(g.unexplainedMiB)} held by no listed process`);
  return parts.join(" · ");
}

export function operationView(op: Operation, nowMs: number): OperationView {
  const final = isFinalOperationStep(op.step);
  const startOf = (s: OperationStep) => op.steps.find((r) => r.step === s)?.atMs ?? null;
  const visitedIndex = (s: OperationStep) => op.steps.findIndex((r) => r.step === s);
  const steps: StepView[] = PATH.map((step, i) => {
    const atMs = startOf(step);
    const laterVisited = PATH.slice(i + 1).some((s) => visitedIndex(s) >= 0) || (final && op.step === "started");
    if (atMs === null) return { step, label: STEP_LABEL[step], status: laterVisited ? "skipped" : final ? "not-reached" : "pending", atMs, durationMs: null };
    const current = !final && op.step === step;
    const next = op.steps[visitedIndex(step) + 1]?.atMs ?? null;
    return { step, label: STEP_LABEL[step], status: current ? "current" : "done", atMs, durationMs: (next ?? nowMs) - atMs };
  });
  const end: OperationStep = final ? op.step : "started";
  steps.push({
    step: end,
    label: STEP_LABEL[end],
    status: !final ? "pending" : end === "started" ? "done" : "failed",
    atMs: final ? startOf(end) : null,
    durationMs: null,
  });
  const waiting = op.step === "stopping" || op.step === "waiting-for-gpus";
  const waitRecord = op.steps.find((r) => r.step === "waiting-for-gpus");
  return {
    steps,
    final,
    tone: operationTone(op.step),
    timeLeftMs: waiting ? Math.max(0, op.deadlineMs - nowMs) : null,
    cancellable: waiting,
    gpuLines: op.gpus.flatMap((g) => gpuLine(g) ?? []),
    heldAtWaitStartMiB: waitRecord ? waitRecord.heldMiB : null,
  };
}

/** "GPUs 0–7" of the operation's last run */
export function operationGpus(op: Operation): string {
  const indexes = op.gpus.flatMap((g) => (g.index === null ? [] : [g.index]));
  return indexes.length > 0 ? `GPU${indexes.length === 1 ? "" : "s"} ${formatIndexList(indexes)}` : "its GPUs";
}
