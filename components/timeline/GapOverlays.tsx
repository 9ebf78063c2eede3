/**
 * Spans in which no agent watched the host: a grey, hatched veil over the lane that lets the
 * rebuilt states below show through (and lets pointer events reach them), and a handle in the
 * marker row that is the focusable list item with the tooltip.
 */
import { LANE_TOP, PLAIN_FRAME, type TimelineFrame } from "./frame";
import { CHAR_PX, type GapBox } from "./layout";
import { fitGapText, gapLabel } from "./labels";
import type { RovingFocus } from "./useRovingFocus";
import type { TipTargetProps } from "./useTimelineTooltip";

export function GapVeils({ gapBoxes, idPrefix, frame = PLAIN_FRAME }: { gapBoxes: readonly GapBox[]; idPrefix: string; frame?: TimelineFrame }) {
  if (gapBoxes.length === 0) return null;
  const bottom = frame.lanesBottom;
  return (
    <g aria-hidden="true" pointerEvents="none" data-testid="gap-veils">
      {gapBoxes.map((g) => (
        <g key={`v${g.fromMs}`}>
          <rect x={g.x} y={1} width={g.width} height={bottom - 1} style={{ fill: "var(--gd-gap-wash)" }} />
          <rect x={g.x} y={1} width={g.width} height={bottom - 1} fill={`url(#${idPrefix}-gap)`} />
          {/* a dashed edge where the span really begins or ends, none where the window cuts it */}
          {!g.clippedStart && <line x1={g.x} x2={g.x} y1={1} y2={bottom} style={{ stroke: "var(--gd-gap-edge)" }} strokeDasharray="3 2" />}
          {!g.clippedEnd && <line x1={g.x + g.width} x2={g.x + g.width} y1={1} y2={bottom} style={{ stroke: "var(--gd-gap-edge)" }} strokeDasharray="3 2" />}
        </g>
      ))}
    </g>
  );
}

export function GapHandles({
  gapBoxes,
  timeZone,
  activeIndex,
  roving,
  tipTarget,
  frame = PLAIN_FRAME,
}: {
  gapBoxes: readonly GapBox[];
  timeZone?: string;
  frame?: TimelineFrame;
  /** the handle whose tooltip is open: outlined down through the lane */
  activeIndex: number | null;
  roving: RovingFocus;
  tipTarget: (index: number) => TipTargetProps;
}) {
  if (gapBoxes.length === 0) return null;
  return (
    <g role="list" aria-label="Times no agent was running, in view">
      {gapBoxes.map((g, i) => {
        const text = fitGapText(g.width);
        return (
          <g
            key={`g${g.fromMs}`}
            ref={roving.ref(i)}
            role="listitem"
            aria-label={gapLabel(g, timeZone)}
            tabIndex={roving.tabIndex(i)}
            data-gap={i}
            className="cursor-pointer outline-none"
            {...tipTarget(i)}
          >
            {/* hit area: the marker row only, so the states below stay hoverable */}
            <rect x={g.x} y={0} width={Math.max(g.width, 8)} height={LANE_TOP} fill="transparent" />
            {text && (
              <g aria-hidden="true" pointerEvents="none">
                <rect
                  x={g.x + g.width / 2 - (text.length * CHAR_PX + 6) / 2}
                  y={3}
                  width={text.length * CHAR_PX + 6}
                  height={14}
                  rx={3}
                  style={{ fill: "var(--gd-surface)", stroke: "var(--gd-gap-edge)" }}
                  strokeWidth={0.75}
                />
                <text x={g.x + g.width / 2} y={14} textAnchor="middle" style={{ fill: "var(--gd-surface-fg)", fontSize: 10, fontWeight: 600 }}>
                  {text}
                </text>
              </g>
            )}
            {i === activeIndex && (
              <rect
                x={g.x - 1}
                y={0}
                width={g.width + 2}
                height={frame.lanesBottom + 1}
                fill="none"
                style={{ stroke: "var(--gd-focus)" }}
                strokeWidth={2}
                pointerEvents="none"
              />
            )}
          </g>
        );
      })}
    </g>
  );
}
