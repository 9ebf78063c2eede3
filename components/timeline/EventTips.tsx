/**
 * Tooltips of the readiness lane, GPU-aware operations and GPU faults: what each was, from when
 * to when, and the details behind it (the stage's progress, each step with held MiB and message,
 * the Xid's meaning and advice). tipDetails() in ./TipDetails.tsx picks one.
 */
import type { ReactNode } from "react";
import { STEP_LABEL } from "@/components/operations/operationView";
import { formatDuration, formatMiB, formatTime } from "@/server/contract/format";
import type { GpuFault } from "@/server/contract/faults";
import { readinessBreakdown, type ReadinessBox } from "./readinessLayout";
import { readinessDurationMs, readinessSegmentName } from "./readinessSegments";
import type { OperationSpan } from "./timelineEvents";

function Row({ name, children }: { name: string; children: ReactNode }) {
  return (
    <>
      <dt className="text-[var(--gd-surface-muted)]">{name}</dt>
      <dd className="m-0">{children}</dd>
    </>
  );
}

const swatch = (colorVar: string, textColorVar: string, text: string) => (
  <span className="rounded px-1.5 font-semibold" style={{ background: colorVar, color: textColorVar }}>
    {text}
  </span>
);

export function ReadinessTip({ box: b, nowMs, timeZone }: { box: ReadinessBox; nowMs: number; timeZone?: string }) {
  const at = (ms: number) => formatTime(ms, { timeZone, millis: true, date: "auto", relativeToMs: nowMs });
  if (b.kind === "cluster") {
    return (
      <div className="pr-4">
        <div className="mb-1 font-semibold">{`${b.segments.length} readiness changes, too close to draw apart`}</div>
        <div className="mb-1">{`${at(b.startMs)} – ${formatTime(b.endMs, { timeZone })} (${formatDuration(b.endMs - b.startMs)})`}</div>
        <ul className="flex flex-col gap-0.5">
          {readinessBreakdown(b.segments).map((e) => (
            <li key={e.name} className="flex items-center gap-2">
              {swatch(e.style.colorVar, e.style.textColorVar, e.name)}
              <span>{`${e.count}× · ${formatDuration(e.ms)}`}</span>
            </li>
          ))}
        </ul>
      </div>
    );
  }
  const s = b.segment;
  const d = readinessDurationMs(s, nowMs);
  return (
    <div className="pr-4">
      <div className="mb-1 flex items-center gap-2">
        {swatch(b.style.colorVar, b.style.textColorVar, readinessSegmentName(s))}
        <span className="text-[var(--gd-surface-muted)]">{b.style.description}</span>
      </div>
      <dl className="grid grid-cols-[auto_1fr] gap-x-2 gap-y-0.5">
        <Row name="From">{s.realStartMs == null ? "before the recorded history" : at(s.realStartMs)}</Row>
        <Row name="To">{s.realEndMs == null ? "now (still so)" : at(s.realEndMs)}</Row>
        <Row name={s.open ? "So far" : "Lasted"}>{d == null ? "unknown" : formatDuration(d)}</Row>
        {s.progress && <Row name="Progress">{`${s.progress.done}/${s.progress.total} when it began`}</Row>}
        {s.reason && <Row name="Why">{s.reason}</Row>}
      </dl>
    </div>
  );
}

export function OperationTip({ span: o, nowMs, timeZone }: { span: OperationSpan; nowMs: number; timeZone?: string }) {
  const op = o.op;
  return (
    <div className="pr-4">
      <div className="mb-1 font-semibold">{`${op.kind === "restart" ? "Restart" : "Start"} when its GPUs are free · ${STEP_LABEL[op.step]}`}</div>
      <p className="mb-1">{`by ${op.user}${op.reason ? `, reason: ${op.reason}` : ""} · operation ${op.id}`}</p>
      <ol className="flex flex-col gap-0.5">
        {op.steps.map((s, i) => (
          <li key={`${s.step}-${s.atMs}`}>
            <b>{formatTime(s.atMs, { timeZone })}</b> {STEP_LABEL[s.step]}
            {op.steps[i + 1] ? ` (${formatDuration(op.steps[i + 1]!.atMs - s.atMs)})` : ""}
            {s.heldMiB > 0 ? ` · ${formatMiB(s.heldMiB)} held` : ""}
            {s.message ? ` — ${s.message}` : ""}
          </li>
        ))}
      </ol>
      {o.open && <p className="mt-1">{`Running for ${formatDuration(nowMs - o.startMs)}; gives up at ${formatTime(op.deadlineMs, { timeZone })}.`}</p>}
    </div>
  );
}

export function FaultTip({ fault: f, nowMs, timeZone }: { fault: GpuFault; nowMs: number; timeZone?: string }) {
  return (
    <div className="max-w-80 pr-4">
      <div className="mb-1 font-semibold">{`Xid ${f.code}: ${f.title}`}</div>
      <dl className="grid grid-cols-[auto_1fr] gap-x-2 gap-y-0.5">
        <Row name="At">{formatTime(f.atMs, { timeZone, millis: true, date: "auto", relativeToMs: nowMs })}</Row>
        <Row name="GPU">{f.gpuIndex != null ? `GPU ${f.gpuIndex} (PCI ${f.pci})` : `PCI ${f.pci}`}</Row>
        <Row name="Process">{f.pid != null ? `PID ${f.pid}${f.processName ? ` (${f.processName})` : ""}${f.unit ? ` in ${f.unit}` : ""}` : "none named"}</Row>
        <Row name="Means">{f.meaning}</Row>
        <Row name="Next">{f.advice}</Row>
        {f.resetRequired && <Row name="Reset">needed: restarting the unit will not help</Row>}
      </dl>
    </div>
  );
}
