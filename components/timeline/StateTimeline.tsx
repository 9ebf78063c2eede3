"use client";
/**
 * State timeline: one swimlane of a unit's ActiveState/SubState over time, with action markers.
 *
 * Self-contained: owns its view window (zoom/pan/follow-now) and reports it through
 * onWindowChange so the GPU memory chart below can draw the same span at the same pixels
 * (both use TIME_GUTTER unless told otherwise).
 *
 * Interaction: drag (mouse or one finger) pans; pinch or Ctrl/⌘+wheel zooms around the
 * pointer; horizontal wheel pans; plain vertical wheel scrolls the page (a timeline that
 * captures the wheel traps people scrolling past it). Keyboard on the plot: ←/→ pan
 * (Shift: a half window), +/− zoom, L or End = live. Segments, spans without an agent and
 * markers are one tab stop each (roving focus: ←/→/Home/End move between them), Enter pins the
 * tooltip, Esc closes it.
 *
 * Spans in which no agent watched the host (`unobserved`) are a grey, hatched veil over the lane:
 * the states below them were rebuilt afterwards from systemd's timestamps (no substates), so
 * they stay visible but read as second-hand. Their handle in the marker row carries the tooltip.
 *
 * This file only assembles: each interaction is a hook beside it (useTimelineView,
 * usePointerPanZoom, useWheelZoom, useTimelineKeyboard, useRovingFocus, useTimelineTooltip) and
 * each visual part a component (TimelineControls, TimeAxis, StateLane, GapOverlays,
 * ActionMarkers, TimelineTooltip, TimelineLegend, TimelineTables).
 */
import { useElementWidth } from "@/components/useElementWidth";
import { useId, useMemo, useRef } from "react";
import type { ObservationGap, UnitTransition } from "@/server/contract/types";
import { ActionMarkers } from "./ActionMarkers";
import { HEIGHT } from "./frame";
import { GapHandles, GapVeils } from "./GapOverlays";
import { isInsideItem, type ItemKind } from "./items";
import { gapSummary, timelineTitle, windowText } from "./labels";
import { TIME_GUTTER, type TimeGutter } from "./layout";
import type { ActionMarker } from "./markers";
import type { CurrentStateFallback } from "./segments";
import { StateLane } from "./StateLane";
import { PatternDefs } from "./StateShape";
import { TimeAxis, TimeCursors } from "./TimeAxis";
import { TimelineControls } from "./TimelineControls";
import { TimelineLegend, legendStyles } from "./TimelineLegend";
import { TimelineTables } from "./TimelineTables";
import { TimelineTooltip } from "./TimelineTooltip";
import { tipDetails } from "./TipDetails";
import { usePointerPanZoom } from "./usePointerPanZoom";
import { useRovingFocus } from "./useRovingFocus";
import { useTimelineKeyboard } from "./useTimelineKeyboard";
import { useTimelineLayout } from "./useTimelineLayout";
import { useTimelineTooltip } from "./useTimelineTooltip";
import { useTimelineView } from "./useTimelineView";
import { useWheelZoom } from "./useWheelZoom";
import type { TimeRange } from "./view";

export type { TimeRange } from "./view";
export type { ActionMarker } from "./markers";

export interface StateTimelineProps {
  transitions: readonly UnitTransition[];
  markers?: readonly ActionMarker[];
  range: TimeRange;
  onRangeChange: (range: TimeRange) => void;
  /** The clock; the parent ticks it (≈1 s) so the timeline keeps moving. */
  nowMs: number;
  /** Called whenever the visible window changes (also on every tick while following now). */
  onWindowChange?: (fromMs: number, toMs: number, following: boolean) => void;
  /** For labels: "State timeline of vllm.service". */
  unitName?: string;
  /** Current state to show when there are no transitions yet. */
  current?: CurrentStateFallback;
  /** Spans in which no agent watched the host (oldest first): drawn as a hatched veil over the lane. */
  unobserved?: readonly ObservationGap[];
  /** Must match the chart's gutter for the time axes to line up. */
  gutter?: TimeGutter;
  /** A time hovered elsewhere (the chart): drawn as a hairline. */
  hoverMs?: number | null;
  onHoverMs?: (ms: number | null) => void;
  /** IANA zone for labels; default: the browser's. */
  timeZone?: string;
  /** Width to render with before the first measurement (server render, tests). Default: render after measuring. */
  initialWidth?: number;
  className?: string;
}

const NO_GAPS: readonly ObservationGap[] = [];
const NO_MARKERS: readonly ActionMarker[] = [];

export function StateTimeline(props: StateTimelineProps) {
  const { transitions, markers = NO_MARKERS, range, onRangeChange, nowMs, onWindowChange, unitName, current, unobserved = NO_GAPS } = props;
  const { gutter = TIME_GUTTER, hoverMs = null, onHoverMs, timeZone, initialWidth, className } = props;
  const rawId = useId();
  const idPrefix = `gdtl${rawId.replace(/[^a-zA-Z0-9_-]/g, "")}`;
  const titleId = `${idPrefix}-title`;
  const helpId = `${idPrefix}-help`;

  const [boxRef, width] = useElementWidth(initialWidth);
  const plotRef = useRef<HTMLDivElement | null>(null);
  const { win, following, rangeMs, dispatch } = useTimelineView({ range, nowMs, onWindowChange });
  const drawn = useTimelineLayout({ win, width, gutter, nowMs, transitions, current, unobserved, markers, timeZone });
  const { scale, boxes, gapBoxes } = drawn;

  // --- focus and tooltips: one roving list per kind of item
  const roving = { segment: useRovingFocus(boxes.length), marker: useRovingFocus(drawn.markers.length), gap: useRovingFocus(gapBoxes.length) };
  const tooltip = useTimelineTooltip({ segment: boxes.length, marker: drawn.markers.length, gap: gapBoxes.length });
  const { tip } = tooltip;
  const activeIndex = (kind: ItemKind) => (tip?.kind === kind ? tip.index : null);
  const tipTarget = (kind: ItemKind) => (index: number) => tooltip.target(kind, index, roving[kind].focused);

  // --- input
  const onKeyDown = useTimelineKeyboard({ spanMs: win.toMs - win.fromMs, tipOpen: tip != null, dispatch, sendTip: tooltip.send, roving });
  const pointerHandlers = usePointerPanZoom({ plotRef, scale, win, dispatch, onHoverMs });
  useWheelZoom(plotRef, scale, dispatch);

  // --- render
  const title = timelineTitle(unitName);
  const windowLabel = windowText(win, following, nowMs, timeZone);
  const measured = width > 0;
  const nowX = nowMs >= win.fromMs && nowMs <= win.toMs ? scale.x(nowMs) : null;
  const hoverX = hoverMs != null && hoverMs >= win.fromMs && hoverMs <= win.toMs ? scale.x(hoverMs) : null;
  const styles = useMemo(() => legendStyles(drawn.segments), [drawn.segments]);
  const tipBox = tip && measured ? { pinned: tip.pinned, ...tipDetails(tip, drawn, nowMs, timeZone) } : null;

  return (
    <section className={`flex flex-col gap-2 ${className ?? ""}`} aria-labelledby={titleId}>
      <TimelineControls
        title={title}
        titleId={titleId}
        range={range}
        onRangeChange={onRangeChange}
        win={win}
        following={following}
        rangeMs={rangeMs}
        dispatch={dispatch}
      />
      <p id={helpId} className="hidden text-xs text-[var(--gd-surface-muted)] sm:block">
        {`${measured ? `${windowLabel} · ` : ""}drag or ←/→ to pan · pinch, Ctrl+scroll or +/− to zoom · Tab to segments and markers, Enter for details`}
      </p>

      <div ref={boxRef} className="relative w-full" style={{ minHeight: HEIGHT }}>
        <div
          ref={plotRef}
          tabIndex={0}
          role="group"
          aria-roledescription="timeline"
          aria-label={measured ? `${title}, ${windowLabel}${following ? ", following now" : ""}. ${drawn.summary}${gapSummary(gapBoxes.length)}` : title}
          aria-describedby={helpId}
          className="relative rounded-md outline-none select-none focus-visible:ring-2 focus-visible:ring-[var(--gd-focus)]"
          style={{ touchAction: "pan-y", height: HEIGHT }}
          onKeyDown={onKeyDown}
          {...pointerHandlers}
          onClick={(e) => {
            // A click on empty lane closes a pinned tooltip.
            if (!isInsideItem(e.target as Element)) tooltip.send({ type: "close" });
          }}
        >
          {measured && (
            <svg width={width} height={HEIGHT} className="block overflow-visible" style={{ fontSize: 11 }}>
              <PatternDefs idPrefix={idPrefix} />
              <TimeAxis scale={scale} ticks={drawn.ticks} />
              <StateLane
                boxes={boxes}
                idPrefix={idPrefix}
                nowMs={nowMs}
                timeZone={timeZone}
                activeIndex={activeIndex("segment")}
                roving={roving.segment}
                tipTarget={tipTarget("segment")}
              />
              <GapVeils gapBoxes={gapBoxes} idPrefix={idPrefix} />
              <GapHandles gapBoxes={gapBoxes} timeZone={timeZone} activeIndex={activeIndex("gap")} roving={roving.gap} tipTarget={tipTarget("gap")} />
              <TimeCursors nowX={nowX} hoverX={hoverX} />
              <ActionMarkers
                markers={drawn.markers}
                scale={scale}
                timeZone={timeZone}
                activeIndex={activeIndex("marker")}
                roving={roving.marker}
                tipTarget={tipTarget("marker")}
              />
            </svg>
          )}
        </div>

        {tipBox && (
          <TimelineTooltip
            x={tipBox.x}
            width={width}
            pinned={tipBox.pinned}
            onClose={() => tooltip.send({ type: "close" })}
            onEscape={() => {
              tooltip.send({ type: "close" });
              plotRef.current?.focus();
            }}
          >
            {tipBox.content}
          </TimelineTooltip>
        )}
      </div>

      {/* Everything below shows times. It renders once the box is measured (in the browser), so a
          server render in another time zone never disagrees with the first client render. */}
      {measured && (
        <>
          <TimelineLegend styles={styles} idPrefix={idPrefix} gaps={gapBoxes.length > 0} markers={drawn.markers.length > 0} now={nowX != null} />
          <TimelineTables
            caption={`${title}, ${windowLabel}`}
            unitName={unitName}
            boxes={boxes}
            gapBoxes={gapBoxes}
            markers={drawn.markers}
            nowMs={nowMs}
            timeZone={timeZone}
          />
        </>
      )}
    </section>
  );
}

export default StateTimeline;
