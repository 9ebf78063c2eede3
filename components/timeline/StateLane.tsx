/**
 * The swimlane: one list item per drawn box (a state, or a cluster of states too narrow to draw
 * apart), in the state's fill and pattern, with its label when it fits. One tab stop for the
 * whole list (roving focus).
 */
import { LANE, LANE_TOP } from "./frame";
import { CHAR_PX, type LaneBox } from "./layout";
import { clusterLabel, segmentLabel } from "./labels";
import { StateShape } from "./StateShape";
import type { RovingFocus } from "./useRovingFocus";
import type { TipTargetProps } from "./useTimelineTooltip";

export function StateLane({
  boxes,
  idPrefix,
  nowMs,
  timeZone,
  activeIndex,
  roving,
  tipTarget,
}: {
  boxes: readonly LaneBox[];
  /** prefix of the pattern ids (PatternDefs) */
  idPrefix: string;
  nowMs: number;
  timeZone?: string;
  /** the box whose tooltip is open: outlined */
  activeIndex: number | null;
  roving: RovingFocus;
  tipTarget: (index: number) => TipTargetProps;
}) {
  return (
    <g role="list" aria-label="States in view">
      {boxes.map((b, i) => (
        <g
          key={b.kind === "segment" ? `s${b.segment.startUsec ?? "start"}-${i}` : `c${b.startMs}-${i}`}
          ref={roving.ref(i)}
          role="listitem"
          aria-label={b.kind === "segment" ? segmentLabel(b.segment, b.style, nowMs, timeZone) : clusterLabel(b, timeZone)}
          tabIndex={roving.tabIndex(i)}
          data-seg={i}
          className="cursor-pointer outline-none"
          {...tipTarget(i)}
        >
          <StateShape idPrefix={idPrefix} style={b.style} x={b.x} y={LANE_TOP} width={b.width} height={LANE} />
          {b.kind === "cluster" && (
            // a comb along the bottom: "many changes here", in any colour scheme
            <rect
              x={b.x}
              y={LANE_TOP + LANE - 7}
              width={b.width}
              height={7}
              fill={`url(#${idPrefix}-vertical)`}
              style={{ stroke: "var(--gd-surface-fg)" }}
              strokeWidth={0.5}
            />
          )}
          {b.label && (
            <g aria-hidden="true">
              <rect
                x={b.x + b.width / 2 - (b.label.length * CHAR_PX + 6) / 2}
                y={LANE_TOP + LANE / 2 - 8}
                width={b.label.length * CHAR_PX + 6}
                height={16}
                rx={3}
                style={{ fill: b.style.colorVar }}
              />
              <text x={b.x + b.width / 2} y={LANE_TOP + LANE / 2 + 4} textAnchor="middle" style={{ fill: b.style.textColorVar, fontWeight: 600 }}>
                {b.label}
              </text>
            </g>
          )}
          {i === activeIndex && (
            <rect
              x={b.x - 1}
              y={LANE_TOP - 1}
              width={b.width + 2}
              height={LANE + 2}
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
