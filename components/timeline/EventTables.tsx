/**
 * The readiness lane, GPU-aware operations and GPU faults in view as tables for screen readers
 * (visually hidden), beside the state and action tables of ./TimelineTables.tsx.
 */
import { STEP_LABEL } from "@/components/operations/operationView";
import { formatDuration, formatTime } from "@/server/contract/format";
import type { GpuFault } from "@/server/contract/faults";
import { readinessBreakdown, type ReadinessBox } from "./readinessLayout";
import { readinessDurationMs, readinessSegmentName } from "./readinessSegments";
import { operationStepsText, type OperationSpan } from "./timelineEvents";

interface Props {
  nowMs: number;
  timeZone?: string;
}

export function ReadinessTable({ boxes, unitName, nowMs, timeZone }: Props & { boxes: readonly ReadinessBox[]; unitName?: string }) {
  const at = (ms: number) => formatTime(ms, { timeZone, date: "auto", relativeToMs: nowMs });
  return (
    <div className="sr-only">
      <table>
        <caption>{`Readiness of ${unitName ?? "the unit"}'s engine in view`}</caption>
        <thead>
          <tr>
            <th scope="col">Readiness</th>
            <th scope="col">From</th>
            <th scope="col">To</th>
            <th scope="col">Duration</th>
            <th scope="col">Why</th>
          </tr>
        </thead>
        <tbody>
          {boxes.map((b, i) => {
            if (b.kind === "cluster") {
              return (
                <tr key={i}>
                  <td>{`${b.segments.length} readiness changes: ${readinessBreakdown(b.segments)
                    .map((e) => `${e.name} ${e.count}×`)
                    .join(", ")}`}</td>
                  <td>{at(b.startMs)}</td>
                  <td>{at(b.endMs)}</td>
                  <td>{formatDuration(b.endMs - b.startMs)}</td>
                  <td>—</td>
                </tr>
              );
            }
            const s = b.segment;
            const d = readinessDurationMs(s, nowMs);
            return (
              <tr key={i}>
                <td>{readinessSegmentName(s)}</td>
                <td>{s.realStartMs == null ? "before recorded history" : at(s.realStartMs)}</td>
                <td>{s.open ? "now (current)" : at(s.realEndMs ?? s.endMs)}</td>
                <td>{d == null ? "unknown" : formatDuration(d)}</td>
                <td>{s.reason ?? "—"}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

export function OperationsTable({ spans, nowMs, timeZone }: Props & { spans: readonly OperationSpan[] }) {
  const at = (ms: number) => formatTime(ms, { timeZone, date: "auto", relativeToMs: nowMs });
  return (
    <div className="sr-only">
      <table>
        <caption>GPU-aware restarts in view (restart when its GPUs are free)</caption>
        <thead>
          <tr>
            <th scope="col">Asked at</th>
            <th scope="col">User</th>
            <th scope="col">Now</th>
            <th scope="col">Steps</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {spans.map((s) => (
            <tr key={s.op.id}>
              <td>{at(s.startMs)}</td>
              <td>{s.op.user}</td>
              <td>{STEP_LABEL[s.op.step]}</td>
              <td>{operationStepsText(s.op, nowMs)}</td>
              <td>{s.op.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function FaultsTable({ faults, nowMs, timeZone }: Props & { faults: readonly GpuFault[] }) {
  return (
    <div className="sr-only">
      <table>
        <caption>GPU faults (NVIDIA Xid) in view</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Xid</th>
            <th scope="col">GPU</th>
            <th scope="col">Process</th>
            <th scope="col">Advice</th>
          </tr>
        </thead>
        <tbody>
          {faults.map((f) => (
            <tr key={f.id}>
              <td>{formatTime(f.atMs, { timeZone, date: "auto", relativeToMs: nowMs })}</td>
              <td>{`${f.code}: ${f.title}${f.resetRequired ? " (reset required)" : ""}`}</td>
              <td>{f.gpuIndex ?? f.pci}</td>
              <td>{f.pid != null ? `PID ${f.pid}${f.unit ? ` in ${f.unit}` : ""}` : "—"}</td>
              <td>{f.advice}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
