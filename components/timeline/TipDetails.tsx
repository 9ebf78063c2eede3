/**
 * What a tooltip says about each kind of item: a state with both ends to the millisecond and
 * systemd's own µs timestamps, a cluster of states, a span without an agent, an action; the
 * readiness lane, operations and faults have theirs in ./EventTips.tsx. tipDetails() picks the
 * content and where the tooltip points for the open tip.
 */
import type { ReactNode } from "react";
import type { GpuFault } from "@/server/contract/faults";
import { formatDuration, formatSystemdTimestamp, formatTime } from "@/server/contract/format";
import { clusterBreakdown, type ClusterBox, type GapBox, type LaneBox, type TimeScale } from "./layout";
import { FaultTip, OperationTip, ReadinessTip } from "./EventTips";
import type { ActionMarker } from "./markers";
import type { ReadinessBox } from "./readinessLayout";
import { segmentDurationMs, type TimelineSegment } from "./segments";
import type { StateStyle } from "./stateStyle";
import type { OperationSpan } from "./timelineEvents";
import type { Tip } from "./useTimelineTooltip";

function TipRow({ name, children }: { name: string; children: ReactNode }) {
  return (
    <>
      <dt className="text-[var(--gd-surface-muted)]">{name}</dt>
      <dd className="m-0">{children}</dd>
    </>
  );
}

function SegmentTip({
  segment: s,
  style,
  nowMs,
  timeZone,
  unobserved,
}: {
  segment: TimelineSegment;
  style: StateStyle;
  nowMs: number;
  timeZone?: string;
  unobserved?: boolean;
}) {
  const d = segmentDurationMs(s, nowMs);
  const endMs = s.realEndMs;
  const exact = (usec: number | null) =>
    usec != null && <div className="font-mono text-[10px] text-[var(--gd-surface-muted)]">{`${formatSystemdTimestamp(usec, timeZone)} · ${usec} µs`}</div>;
  return (
    <div className="pr-4">
      <div className="mb-1 flex items-center gap-2">
        <span className={style.className}>{style.label}</span>
        {s.open && <span className="text-[var(--gd-surface-muted)]">current</span>}
      </div>
      <dl className="grid grid-cols-[auto_1fr] gap-x-2 gap-y-0.5">
        <TipRow name="From">
          {s.realStartMs == null ? (
            "before the recorded history"
          ) : (
            <>
              {formatTime(s.realStartMs, { timeZone, millis: true, date: "auto", relativeToMs: nowMs })}
              {exact(s.startUsec)}
            </>
          )}
        </TipRow>
        <TipRow name="To">
          {endMs == null ? (
            "now (still in this state)"
          ) : (
            <>
              {formatTime(endMs, { timeZone, millis: true, date: "auto", relativeToMs: nowMs })}
              {exact(s.endUsec)}
            </>
          )}
        </TipRow>
        <TipRow name={s.open ? "So far" : "Lasted"}>{d == null ? "unknown (began before the recorded history)" : formatDuration(d)}</TipRow>
        {s.result && <TipRow name="Result">{s.result}</TipRow>}
        {unobserved && <TipRow name="Observed">no agent running for part or all of it: rebuilt from systemd&apos;s timestamps</TipRow>}
        {s.inRestartCycle && <TipRow name="Restart=">step of an automatic restart cycle</TipRow>}
        {s.mainPid || s.controlPid || s.nRestarts ? (
          <TipRow name="Process">
            {[s.mainPid ? `main PID ${s.mainPid}` : null, s.controlPid ? `control PID ${s.controlPid}` : null, s.nRestarts ? `${s.nRestarts} restarts` : null]
              .filter(Boolean)
              .join(" · ")}
          </TipRow>
        ) : null}
      </dl>
    </div>
  );
}

function ClusterTip({ cluster: c, nowMs, timeZone }: { cluster: ClusterBox; nowMs: number; timeZone?: string }) {
  const failed = c.segments.filter((s) => s.activeState === "failed").length;
  return (
    <div className="pr-4">
      <div className="mb-1 font-semibold">{`${c.segments.length} state changes, too close to draw apart`}</div>
      <div className="mb-1">
        {`${formatTime(c.startMs, { timeZone, date: "auto", relativeToMs: nowMs })} – ${formatTime(c.endMs, { timeZone })} (${formatDuration(c.endMs - c.startMs)})`}
        {failed > 0 && <span className="ml-1 font-semibold text-[var(--gd-marker-failed)]">{`· failed ${failed}×`}</span>}
      </div>
      <ul className="flex flex-col gap-0.5">
        {clusterBreakdown(c.segments).map((e) => (
          <li key={e.style.label} className="flex items-center gap-2">
            <span className={e.style.className}>{e.style.label}</span>
            <span>{`${e.count}× · ${formatDuration(e.ms)}`}</span>
          </li>
        ))}
      </ul>
      <p className="mt-1 text-[var(--gd-surface-muted)]">Double-click, pinch or press + to zoom in.</p>
    </div>
  );
}

function GapTip({ gap: g, nowMs, timeZone }: { gap: GapBox; nowMs: number; timeZone?: string }) {
  return (
    <div className="pr-4">
      <div className="mb-1 font-semibold">Agent not running</div>
      <dl className="grid grid-cols-[auto_1fr] gap-x-2 gap-y-0.5">
        <TipRow name="From">{formatTime(g.fromMs, { timeZone, date: "auto", relativeToMs: nowMs })}</TipRow>
        <TipRow name="To">{formatTime(g.toMs, { timeZone, date: "auto", relativeToMs: nowMs })}</TipRow>
        <TipRow name="Lasted">{formatDuration(g.toMs - g.fromMs)}</TipRow>
      </dl>
      <p className="mt-1 max-w-72">
        No agent watched the host. The states in this span were rebuilt from systemd&apos;s timestamps afterwards; substates were not observed and GPU memory
        was not sampled.
      </p>
    </div>
  );
}

function MarkerTip({ marker: m, nowMs, timeZone }: { marker: ActionMarker; nowMs: number; timeZone?: string }) {
  return (
    <div className="pr-4">
      <div className="mb-1 font-semibold">
        {m.action} by {m.user}
      </div>
      <dl className="grid grid-cols-[auto_1fr] gap-x-2 gap-y-0.5">
        <TipRow name="At">{formatTime(m.atMs, { timeZone, millis: true, date: "auto", relativeToMs: nowMs })}</TipRow>
        <TipRow name="Reason">{m.reason ? m.reason : <span className="text-[var(--gd-surface-muted)]">none given</span>}</TipRow>
        {m.jobResult && <TipRow name="Job result">{m.jobResult}</TipRow>}
      </dl>
      {m.href && (
        <a className="mt-1 inline-block underline" href={m.href}>
          Audit entry{m.auditId != null ? ` #${m.auditId}` : ""} →
        </a>
      )}
    </div>
  );
}

/** Whether [startMs, endMs] shares time with one of the (window-clipped) spans without an agent. */
export function overlapsGap(gaps: readonly GapBox[], startMs: number, endMs: number): boolean {
  return gaps.some((g) => g.startMs < endMs && g.endMs > startMs);
}

/** The open tip's content and the x it points at (the middle of its box, or the marker's line). */
export function tipDetails(
  tip: Tip,
  drawn: {
    boxes: readonly LaneBox[];
    gapBoxes: readonly GapBox[];
    markers: readonly ActionMarker[];
    scale: TimeScale;
    readinessBoxes: readonly ReadinessBox[];
    operations: readonly OperationSpan[];
    faults: readonly GpuFault[];
  },
  nowMs: number,
  timeZone?: string,
): { x: number; content: ReactNode } {
  if (tip.kind === "readiness") {
    const b = drawn.readinessBoxes[tip.index]!;
    return { x: b.x + b.width / 2, content: <ReadinessTip box={b} nowMs={nowMs} timeZone={timeZone} /> };
  }
  if (tip.kind === "operation") {
    const o = drawn.operations[tip.index]!;
    return { x: o.x + o.width / 2, content: <OperationTip span={o} nowMs={nowMs} timeZone={timeZone} /> };
  }
  if (tip.kind === "fault") {
    const f = drawn.faults[tip.index]!;
    return { x: drawn.scale.x(f.atMs), content: <FaultTip fault={f} nowMs={nowMs} timeZone={timeZone} /> };
  }
  if (tip.kind === "segment") {
    const b = drawn.boxes[tip.index]!;
    return {
      x: b.x + b.width / 2,
      content:
        b.kind === "segment" ? (
          <SegmentTip
            segment={b.segment}
            style={b.style}
            nowMs={nowMs}
            timeZone={timeZone}
            unobserved={overlapsGap(drawn.gapBoxes, b.segment.startMs, b.segment.endMs)}
          />
        ) : (
          <ClusterTip cluster={b} nowMs={nowMs} timeZone={timeZone} />
        ),
    };
  }
  if (tip.kind === "gap") {
    const g = drawn.gapBoxes[tip.index]!;
    return { x: g.x + g.width / 2, content: <GapTip gap={g} nowMs={nowMs} timeZone={timeZone} /> };
  }
  const m = drawn.markers[tip.index]!;
  return { x: drawn.scale.x(m.atMs), content: <MarkerTip marker={m} nowMs={nowMs} timeZone={timeZone} /> };
}
