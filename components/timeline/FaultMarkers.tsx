/**
 * GPU faults (NVIDIA Xid) on the timeline: a warning triangle in the marker row and a dashed line
 * down through the lanes, in the fault colour (heavier for one that needs a reset). The shape,
 * not only its colour, tells it from an action's flag. One tab stop for the list (roving focus).
 */
import type { GpuFault } from "@/server/contract/faults";
import { PLAIN_FRAME, type TimelineFrame } from "./frame";
import type { TimeScale } from "./layout";
import { faultLabel } from "./timelineEvents";
import type { RovingFocus } from "./useRovingFocus";
import type { TipTargetProps } from "./useTimelineTooltip";

export function FaultMarkers({
  faults,
  scale,
  timeZone,
  activeIndex,
  roving,
  tipTarget,
  frame = PLAIN_FRAME,
}: {
  /** in view, oldest first */
  faults: readonly GpuFault[];
  scale: TimeScale;
  timeZone?: string;
  activeIndex: number | null;
  roving: RovingFocus;
  tipTarget: (index: number) => TipTargetProps;
  frame?: TimelineFrame;
}) {
  if (faults.length === 0) return null;
  return (
    <g role="list" aria-label="GPU faults in view">
      {faults.map((f, i) => {
        const x = scale.x(f.atMs);
        const color = f.severity === "critical" ? "var(--gd-fault)" : "var(--gd-fault-warning)";
        const active = i === activeIndex;
        return (
          <g
            key={f.id}
            ref={roving.ref(i)}
            role="listitem"
            aria-label={faultLabel(f, timeZone)}
            tabIndex={roving.tabIndex(i)}
            data-fault={i}
            className="cursor-pointer outline-none"
            {...tipTarget(i)}
          >
            <rect x={x - 8} y={0} width={16} height={14} fill="transparent" />
            <line
              x1={x}
              x2={x}
              y1={12}
              y2={frame.lanesBottom}
              style={{ stroke: color }}
              strokeWidth={f.resetRequired || active ? 2 : 1.25}
              strokeDasharray="4 2"
              pointerEvents="none"
            />
            <path d={`M${x},1 l6,11 h-12 z`} style={{ fill: color, stroke: active ? "var(--gd-focus)" : "var(--gd-surface)" }} strokeWidth={1.5} />
            <text x={x} y={10.5} textAnchor="middle" aria-hidden="true" style={{ fill: "var(--gd-surface)", fontSize: 8, fontWeight: 700 }}>
              !
            </text>
          </g>
        );
      })}
    </g>
  );
}
