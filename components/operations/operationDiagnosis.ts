/**
 * What the diagnosis card says while a GPU-aware operation runs for the unit: the operation, not
 * the state it left the unit in on the way ("Failed 30 s ago … restart it" while it waits for the
 * GPUs would invite a second restart). What it waits for, since when, asked by whom, and, once it
 * starts the unit, the engine's progress in the same words as the header (the live stream's
 * readiness). Pure, so the wording is tested.
 */
import { formatDuration, formatMiB, formatTime } from "@/server/contract/format";
import { isFinalOperationStep, type Operation } from "@/server/contract/operations";
import type { Readiness } from "@/server/contract/readiness";
import { readinessText } from "@/components/readiness/readinessText";
import { operationGpus } from "./operationView";

export interface OperationDiagnosisText {
  /** "Restart when its GPUs are free, asked by alice 1 min 10 s ago: waiting for its GPUs since 14:02:11 (40 s)." */
  headline: string;
  /** the agent's own sentence about the step, and the request's reason */
  details: string[];
  nextStep: string;
}

/** null once the operation has ended (the card is the diagnosis again). */
export function operationDiagnosis(op: Operation, readiness: Readiness | undefined, nowMs: number): OperationDiagnosisText | null {
  if (isFinalOperationStep(op.step)) return null;
  const kind = op.kind === "restart" ? "Restart" : "Start";
  const stepSince = op.steps.at(-1)?.atMs ?? op.atMs;
  const since = `since ${formatTime(stepSince)} (${formatDuration(Math.max(0, nowMs - stepSince))})`;
  const asked = `${kind} when its GPUs are free, asked by ${op.user} ${formatDuration(Math.max(0, nowMs - op.createdAtMs))} ago`;
  let what: string;
  let nextStep: string;
  switch (op.step) {
    case "stopping":
      what = `stopping ${op.unit} ${since}`;
      nextStep = "Nothing to do while it runs: once the unit has stopped it waits for the GPU memory of its last run, then starts it. Cancel it above to stop.";
      break;
    case "waiting-for-gpus": {
      const held = op.heldMiB > 0 ? `: ${formatMiB(op.heldMiB)} of its last run still held on ${operationGpus(op)}` : "";
      what = `waiting for its GPUs ${since}${held}; it gives up at ${formatTime(op.deadlineMs)}`;
      nextStep = "Nothing to do while it waits: it starts the unit by itself once that memory is released. Cancel it above to stop waiting.";
      break;
    }
    default: {
      const engine = readinessText(readiness, nowMs);
      what = `starting ${op.unit} ${since}${engine && engine.state === "loading" ? `: ${engine.text}` : ""}`;
      nextStep = "Nothing to do: the start job is queued with systemd; the unit serves once its engine is ready.";
    }
  }
  const details = [op.message, op.reason ? `Reason: ${op.reason}` : ""].filter((d) => d !== "");
  return { headline: `${asked}: ${what}.`, details, nextStep };
}
