/**
 * Action markers: a flag in the marker row and a line through the lane where someone acted on
 * the unit (down through the lanes), red when the job it queued failed. One tab stop for the list (roving focus).
 */
import { LANE_TOP, PLAIN_FRAME, type TimelineFrame } from "./frame";
import type { TimeScale } from "./layout";
import { jobFailed, markerLabel, type ActionMarker } from "./markers";
import type { RovingFocus } from "./useRovingFocus";
import type { TipTargetProps } from "./useTimelineTooltip";

export function ActionMarkers({
  markers,
  scale,
  timeZone,
  activeIndex,
  roving,
  tipTarget,
  frame = PLAIN_FRAME,
}: {
  /** the markers in view, oldest first */
  markers: readonly ActionMarker[];
  scale: TimeScale;
  timeZone?: string;
  /** the marker whose tooltip is open: drawn heavier, with a focus outline */
  activeIndex: number | null;
  roving: RovingFocus;
  tipTarget: (index: number) => TipTargetProps;
  frame?: TimelineFrame;
}) {
  return (
    <g role="list" aria-label="Actions in view">
      {markers.map((m, i) => {
        const x = scale.x(m.atMs);
        const color = jobFailed(m) ? "var(--gd-marker-failed)" : "var(--gd-marker)";
        const active = i === activeIndex;
        return (
          <g
            key={`${m.auditId ?? m.atMs}-${i}`}
            ref={roving.ref(i)}
            role="listitem"
            aria-label={markerLabel(m, timeZone)}
            tabIndex={roving.tabIndex(i)}
            data-marker={i}
            className="cursor-pointer outline-none"
            {...tipTarget(i)}
          >
            {/* wide hit area for fingers over the flag row only, so the lane below stays hoverable */}
            <rect x={x - 8} y={0} width={18} height={LANE_TOP} fill="transparent" />
            <line x1={x} x2={x} y1={2} y2={frame.lanesBottom} style={{ stroke: color }} strokeWidth={active ? 2.5 : 1.5} pointerEvents="none" />
            <path d={`M${x},2 h10 l-3,4.5 l3,4.5 h-10 z`} style={{ fill: color, stroke: active ? "var(--gd-focus)" : "none" }} strokeWidth={1.5} />
          </g>
        );
      })}
    </g>
  );
}
