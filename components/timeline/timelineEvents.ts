/**
 * GPU-aware operations (a span from the request to its end, with a tick per step) and GPU faults
 * (Xid markers) on the timeline: which are in view, where they sit, and the words their items
 * speak. Drawing is in OperationSpans.tsx and FaultMarkers.tsx.
 */
import { STEP_LABEL } from "@/components/operations/operationView";
import { formatDuration, formatTime } from "@/server/contract/format";
import type { GpuFault } from "@/server/contract/faults";
import { isFinalOperationStep, type Operation } from "@/server/contract/operations";
import { MIN_SEGMENT_PX, type TimeScale } from "./layout";

export interface OperationSpan {
  op: Operation;
  /** unclipped: the request, and its end (now while it runs) */
  startMs: number;
  endMs: number;
  open: boolean;
  x: number;
  width: number;
  /** x of each step entered, in the window */
  stepXs: { step: Operation["step"]; x: number }[];
}

/** The operations that share time with the window, oldest first, placed on the scale. */
export function layoutOperations(ops: readonly Operation[], scale: TimeScale, nowMs: number): OperationSpan[] {
  const right = scale.left + scale.width;
  return ops
    .map((op) => {
      const open = !isFinalOperationStep(op.step);
      const endMs = open ? Math.max(nowMs, op.createdAtMs) : (op.steps.at(-1)?.atMs ?? op.atMs);
      return { op, startMs: op.createdAtMs, endMs, open };
    })
    .filter((o) => o.endMs >= scale.fromMs && o.startMs <= scale.toMs)
    .sort((a, b) => a.startMs - b.startMs)
    .map((o) => {
      const x0 = scale.x(Math.max(o.startMs, scale.fromMs));
      const width = Math.max(MIN_SEGMENT_PX * 2, scale.x(Math.min(o.endMs, scale.toMs)) - x0);
      const stepXs = o.op.steps.filter((s) => s.atMs >= scale.fromMs && s.atMs <= scale.toMs).map((s) => ({ step: s.step, x: scale.x(s.atMs) }));
      return { ...o, x: Math.min(x0, right - width), width, stepXs };
    });
}

/** "waiting for its GPUs 20 s, starting 9.0 s, started": each step entered with how long it lasted. */
export function operationStepsText(op: Operation, nowMs: number): string {
  return op.steps
    .map((s, i) => {
      if (isFinalOperationStep(s.step)) return STEP_LABEL[s.step];
      const next = op.steps[i + 1]?.atMs ?? nowMs;
      return `${STEP_LABEL[s.step]} ${formatDuration(next - s.atMs)}`;
    })
    .join(", ");
}

/** "restart when its GPUs are free by ada from 10:34:41 to 10:35:12 (31 s): …steps" */
export function operationLabel(o: Pick<OperationSpan, "op" | "startMs" | "endMs" | "open">, nowMs: number, timeZone?: string): string {
  const to = o.open ? "now" : formatTime(o.endMs, { timeZone });
  const steps = operationStepsText(o.op, nowMs);
  return `${o.op.kind} when its GPUs are free by ${o.op.user} from ${formatTime(o.startMs, { timeZone })} to ${to} (${formatDuration(o.endMs - o.startMs)})${steps ? `: ${steps}` : ""}`;
}

/** Faults inside [fromMs, toMs], oldest first. */
export function faultsInView(faults: readonly GpuFault[], fromMs: number, toMs: number): GpuFault[] {
  return faults.filter((f) => f.atMs >= fromMs && f.atMs <= toMs).sort((a, b) => a.atMs - b.atMs);
}

/** "Xid 79 at 03:12:04 on GPU 3: GPU has fallen off the bus, reset required, PID 4321 (python3)" */
export function faultLabel(f: GpuFault, timeZone?: string): string {
  const gpu = f.gpuIndex != null ? `GPU ${f.gpuIndex}` : `PCI ${f.pci}`;
  const pid = f.pid != null ? `, PID ${f.pid}${f.processName ? ` (${f.processName})` : ""}` : "";
  return `Xid ${f.code} at ${formatTime(f.atMs, { timeZone })} on ${gpu}: ${f.title}${f.resetRequired ? ", reset required" : ""}${pid}`;
}
