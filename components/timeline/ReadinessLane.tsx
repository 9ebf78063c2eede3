/**
 * The readiness lane under the state lane: one list item per box (a readiness state or stage, or
 * a cluster of them too narrow to draw apart), in its fill and pattern, labelled with the stage
 * ("loading weights") or state ("serving") where it fits. One tab stop for the list (roving focus).
 */
import { READINESS_LANE } from "./frame";
import { CHAR_PX } from "./layout";
import { readinessClusterLabel, readinessLabel, type ReadinessBox } from "./readinessLayout";
import { StateShape } from "./StateShape";
import type { RovingFocus } from "./useRovingFocus";
import type { TipTargetProps } from "./useTimelineTooltip";

export function ReadinessLane({
  boxes,
  top,
  idPrefix,
  nowMs,
  timeZone,
  activeIndex,
  roving,
  tipTarget,
}: {
  boxes: readonly ReadinessBox[];
  /** the lane's y (TimelineFrame.readinessTop) */
  top: number;
  idPrefix: string;
  nowMs: number;
  timeZone?: string;
  activeIndex: number | null;
  roving: RovingFocus;
  tipTarget: (index: number) => TipTargetProps;
}) {
  const h = READINESS_LANE;
  return (
    <g role="list" aria-label="Readiness in view">
      {boxes.map((b, i) => (
        <g
          key={`${b.kind === "segment" ? b.segment.startMs : b.startMs}-${i}`}
          ref={roving.ref(i)}
          role="listitem"
          aria-label={b.kind === "segment" ? readinessLabel(b.segment, nowMs, timeZone) : readinessClusterLabel(b, timeZone)}
          tabIndex={roving.tabIndex(i)}
          data-ready={i}
          data-state={b.kind === "segment" ? b.segment.state : "cluster"}
          className="cursor-pointer outline-none"
          {...tipTarget(i)}
        >
          <StateShape idPrefix={idPrefix} style={b.style} x={b.x} y={top} width={b.width} height={h} />
          {b.kind === "cluster" && (
            <rect
              x={b.x}
              y={top + h - 5}
              width={b.width}
              height={5}
              fill={`url(#${idPrefix}-vertical)`}
              style={{ stroke: "var(--gd-surface-fg)" }}
              strokeWidth={0.5}
            />
          )}
          {b.label && (
            <g aria-hidden="true">
              <rect
                x={b.x + b.width / 2 - (b.label.length * CHAR_PX + 6) / 2}
                y={top + h / 2 - 8}
                width={b.label.length * CHAR_PX + 6}
                height={16}
                rx={3}
                style={{ fill: b.style.colorVar }}
              />
              <text x={b.x + b.width / 2} y={top + h / 2 + 4} textAnchor="middle" style={{ fill: b.style.textColorVar, fontWeight: 600 }}>
                {b.label}
              </text>
            </g>
          )}
          {i === activeIndex && (
            <rect
              x={b.x - 1}
              y={top - 1}
              width={b.width + 2}
              height={h + 2}
              fill="none"
              style={{ stroke: "var(--gd-focus)" }}
              strokeWidth={2}
              pointerEvents="none"
            />
          )}
        </g>
      ))}
    </g>
  );
}
