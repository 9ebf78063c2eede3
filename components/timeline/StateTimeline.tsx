"use client";
/**
 * State timeline: one swimlane of a unit's ActiveState/SubState over time, with action markers;
 * for a unit with an inference engine a second lane under it with the engine's readiness (load
 * stages, serving, not serving, failed) on the same time axis; GPU-aware restarts as spans and
 * GPU faults (Xid) as markers in the marker row.
 *
 * Self-contained: owns its view window (zoom/pan/follow-now) and reports it through
 * onWindowChange so the GPU memory chart below can draw the same span at the same pixels
 * (both use TIME_GUTTER unless told otherwise).
 *
 * Interaction: drag (mouse or one finger) pans; pinch or Ctrl/⌘+wheel zooms around the
 * pointer; horizontal wheel pans; plain vertical wheel scrolls the page (a timeline that
 * captures the wheel traps people scrolling past it). Keyboard on the plot: ←/→ pan
 * (Shift: a half window), +/− zoom, L or End = live. Segments, readiness boxes, spans without an
 * agent, markers, operations and faults are one tab stop per kind (roving focus: ←/→/Home/End
 * move between them), Enter pins the tooltip, Esc closes it.
 *
 * Spans in which no agent watched the host (`unobserved`) are a grey, hatched veil over the lane:
 * the states below them were rebuilt afterwards from systemd's timestamps (no substates), so
 * they stay visible but read as second-hand. Their handle in the marker row carries the tooltip.
 *
 * This file only assembles: each interaction is a hook beside it (useTimelineView,
 * usePointerPanZoom, useWheelZoom, useTimelineKeyboard, useRovingFocus, useTimelineTooltip) and
 * each visual part a component (TimelineControls, TimeAxis, StateLane, ReadinessLane, GapOverlays,
 * ActionMarkers, OperationSpans, FaultMarkers, TimelineTip (loaded on first use: lazyTip),
 * TimelineLegend, TimelineTables, EventTables).
 */
import { useElementWidth } from "@/components/useElementWidth";
import { useId, useMemo, useRef } from "react";
import type { GpuFault } from "@/server/contract/faults";
import type { Operation } from "@/server/contract/operations";
import type { Readiness, ReadinessTransition } from "@/server/contract/readiness";
import type { ObservationGap, UnitTransition } from "@/server/contract/types";
import { ActionMarkers } from "./ActionMarkers";
import { FaultsTable, OperationsTable, ReadinessTable } from "./EventTables";
import { FaultMarkers } from "./FaultMarkers";
import { timelineFrame } from "./frame";
import { GapHandles, GapVeils } from "./GapOverlays";
import { isInsideItem, type ItemKind } from "./items";
import { gapSummary, timelineTitle, windowText } from "./labels";
import { TIME_GUTTER, type TimeGutter } from "./layout";
import type { ActionMarker } from "./markers";
import { OperationSpans } from "./OperationSpans";
import { ReadinessLane } from "./ReadinessLane";
import type { CurrentStateFallback } from "./segments";
import { StateLane } from "./StateLane";
import { PatternDefs } from "./StateShape";
import { TimeAxis, TimeCursors } from "./TimeAxis";
import { TimelineControls } from "./TimelineControls";
import { TimelineLegend, legendReadinessStyles, legendStyles } from "./TimelineLegend";
import { TimelineTables } from "./TimelineTables";
import { loadTimelineTip, useTimelineTip } from "./lazyTip";
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
  /** a pinned tooltip links to the unit's journal at that moment (the unit page: ./journalMoment.tsx) */
  journalLinks?: boolean;
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
  /** The engine's readiness changes (units.timeline().readiness, merged with live ones): the readiness lane. */
  readiness?: readonly ReadinessTransition[];
  /** The unit's readiness now; the lane is drawn when there is history or an engine is recognised. */
  currentReadiness?: Readiness;
  /** GPU-aware starts/restarts of the unit: spans in the marker row. */
  operations?: readonly Operation[];
  /** GPU faults (Xid) of the unit: markers. */
  faults?: readonly GpuFault[];
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
const NO_READINESS: readonly ReadinessTransition[] = [];
const NO_OPERATIONS: readonly Operation[] = [];
const NO_FAULTS: readonly GpuFault[] = [];

export function StateTimeline(props: StateTimelineProps) {
  const { transitions, markers = NO_MARKERS, range, onRangeChange, nowMs, onWindowChange, unitName, current, unobserved = NO_GAPS } = props;
  const { gutter = TIME_GUTTER, hoverMs = null, onHoverMs, timeZone, initialWidth, className } = props;
  const { readiness = NO_READINESS, currentReadiness, operations = NO_OPERATIONS, faults = NO_FAULTS, journalLinks = false } = props;
  const extras = useMemo(() => ({ readiness, currentReadiness, operations, faults }), [readiness, currentReadiness, operations, faults]);
  const frame = timelineFrame(readiness.length > 0 || (currentReadiness != null && (currentReadiness.state !== "unknown" || currentReadiness.engine != null)));
  const height = frame.height;
  const rawId = useId();
  const idPrefix = `gdtl${rawId.replace(/[^a-zA-Z0-9_-]/g, "")}`;
  const titleId = `${idPrefix}-title`;
  const helpId = `${idPrefix}-help`;

  const [boxRef, width] = useElementWidth(initialWidth);
  const plotRef = useRef<HTMLDivElement | null>(null);
  const { win, following, rangeMs, dispatch } = useTimelineView({ range, nowMs, onWindowChange });
  const drawn = useTimelineLayout({ win, width, gutter, nowMs, transitions, current, unobserved, markers, timeZone, extras });
  const { scale, boxes, gapBoxes } = drawn;

  // --- focus and tooltips: one roving list per kind of item
  const counts = {
    segment: boxes.length,
    readiness: drawn.readinessBoxes.length,
    marker: drawn.markers.length,
    operation: drawn.operations.length,
    fault: drawn.faults.length,
    gap: gapBoxes.length,
  };
  const roving = {
    segment: useRovingFocus(counts.segment),
    readiness: useRovingFocus(counts.readiness),
    marker: useRovingFocus(counts.marker),
    operation: useRovingFocus(counts.operation),
    fault: useRovingFocus(counts.fault),
    gap: useRovingFocus(counts.gap),
  };
  const tooltip = useTimelineTooltip(counts);
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
  const readinessStyles = useMemo(() => legendReadinessStyles(drawn.readinessSegments), [drawn.readinessSegments]);
  const tipCode = useTimelineTip(tip != null);

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

      <div ref={boxRef} className="relative w-full" style={{ minHeight: height }}>
        <div
          ref={plotRef}
          tabIndex={0}
          role="group"
          aria-roledescription="timeline"
          aria-label={measured ? `${title}, ${windowLabel}${following ? ", following now" : ""}. ${drawn.summary}${gapSummary(gapBoxes.length)}` : title}
          aria-describedby={helpId}
          className="relative rounded-md outline-none select-none focus-visible:ring-2 focus-visible:ring-[var(--gd-focus)]"
          style={{ touchAction: "pan-y", height }}
          onKeyDown={onKeyDown}
          // the tooltip's code comes as soon as someone points at or tabs to the timeline
          onPointerEnter={() => void loadTimelineTip()}
          onFocus={() => void loadTimelineTip()}
          {...pointerHandlers}
          onClick={(e) => {
            // A click on empty lane closes a pinned tooltip.
            if (!isInsideItem(e.target as Element)) tooltip.send({ type: "close" });
          }}
        >
          {measured && (
            <svg width={width} height={height} className="block overflow-visible" style={{ fontSize: 11 }}>
              <PatternDefs idPrefix={idPrefix} />
              <TimeAxis scale={scale} ticks={drawn.ticks} frame={frame} />
              <StateLane
                boxes={boxes}
                idPrefix={idPrefix}
                nowMs={nowMs}
                timeZone={timeZone}
                activeIndex={activeIndex("segment")}
                roving={roving.segment}
                tipTarget={tipTarget("segment")}
              />
              {frame.readinessTop != null && (
                <ReadinessLane
                  boxes={drawn.readinessBoxes}
                  top={frame.readinessTop}
                  idPrefix={idPrefix}
                  nowMs={nowMs}
                  timeZone={timeZone}
                  activeIndex={activeIndex("readiness")}
                  roving={roving.readiness}
                  tipTarget={tipTarget("readiness")}
                />
              )}
              <GapVeils gapBoxes={gapBoxes} idPrefix={idPrefix} frame={frame} />
              <GapHandles
                gapBoxes={gapBoxes}
                timeZone={timeZone}
                activeIndex={activeIndex("gap")}
                roving={roving.gap}
                tipTarget={tipTarget("gap")}
                frame={frame}
              />
              <TimeCursors nowX={nowX} hoverX={hoverX} frame={frame} />
              <OperationSpans
                spans={drawn.operations}
                nowMs={nowMs}
                timeZone={timeZone}
                activeIndex={activeIndex("operation")}
                roving={roving.operation}
                tipTarget={tipTarget("operation")}
              />
              <ActionMarkers
                markers={drawn.markers}
                scale={scale}
                timeZone={timeZone}
                activeIndex={activeIndex("marker")}
                roving={roving.marker}
                tipTarget={tipTarget("marker")}
                frame={frame}
              />
              <FaultMarkers
                faults={drawn.faults}
                scale={scale}
                timeZone={timeZone}
                activeIndex={activeIndex("fault")}
                roving={roving.fault}
                tipTarget={tipTarget("fault")}
                frame={frame}
              />
            </svg>
          )}
        </div>

        {tip && measured && tipCode && (
          <tipCode.TimelineTip
            tip={tip}
            drawn={drawn}
            nowMs={nowMs}
            timeZone={timeZone}
            width={width}
            frame={frame}
            journalLinks={journalLinks}
            onClose={() => tooltip.send({ type: "close" })}
            onEscape={() => {
              tooltip.send({ type: "close" });
              plotRef.current?.focus();
            }}
          />
        )}
      </div>

      {/* Everything below shows times. It renders once the box is measured (in the browser), so a
          server render in another time zone never disagrees with the first client render. */}
      {measured && (
        <>
          <TimelineLegend
            styles={styles}
            readinessStyles={readinessStyles}
            idPrefix={idPrefix}
            gaps={gapBoxes.length > 0}
            markers={drawn.markers.length > 0}
            operations={drawn.operations.length > 0}
            faults={drawn.faults.length > 0}
            now={nowX != null}
          />
          <TimelineTables
            caption={`${title}, ${windowLabel}`}
            unitName={unitName}
            boxes={boxes}
            gapBoxes={gapBoxes}
            markers={drawn.markers}
            nowMs={nowMs}
            timeZone={timeZone}
          />
          {drawn.readinessBoxes.length > 0 && <ReadinessTable boxes={drawn.readinessBoxes} unitName={unitName} nowMs={nowMs} timeZone={timeZone} />}
          {drawn.operations.length > 0 && <OperationsTable spans={drawn.operations} nowMs={nowMs} timeZone={timeZone} />}
          {drawn.faults.length > 0 && <FaultsTable faults={drawn.faults} nowMs={nowMs} timeZone={timeZone} />}
        </>
      )}
    </section>
  );
}

export default StateTimeline;
