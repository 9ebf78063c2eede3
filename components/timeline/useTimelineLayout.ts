/**
 * Everything the timeline draws for one window at one width: segments clipped to the window and
 * placed as boxes, the readiness lane's boxes, spans without an agent, markers, GPU-aware
 * operations and faults in view, axis ticks, and the summary sentence. Memoised, because the
 * clock re-renders the timeline every second.
 */
import { useMemo } from "react";
import type { GpuFault } from "@/server/contract/faults";
import type { Operation } from "@/server/contract/operations";
import type { Readiness, ReadinessTransition } from "@/server/contract/readiness";
import type { ObservationGap } from "@/server/contract/types";
import { layoutGaps, layoutSegments, timeScale, type GapBox, type LaneBox, type TimeGutter, type TimeScale } from "./layout";
import { markersInView, type ActionMarker } from "./markers";
import { layoutReadiness, type ReadinessBox } from "./readinessLayout";
import { buildReadinessSegments, summarizeReadiness, type ReadinessSegment } from "./readinessSegments";
import { faultsInView, layoutOperations, type OperationSpan } from "./timelineEvents";
import { buildSegments, summarizeSegments, type CurrentStateFallback, type TimelineSegment } from "./segments";
import { timeTicks, type TimeTick } from "./ticks";
import type { TimeWindow } from "./view";

export interface TimelineLayout {
  segments: TimelineSegment[];
  scale: TimeScale;
  boxes: LaneBox[];
  gapBoxes: GapBox[];
  markers: ActionMarker[];
  ticks: TimeTick[];
  summary: string;
  readinessSegments: ReadinessSegment[];
  readinessBoxes: ReadinessBox[];
  operations: OperationSpan[];
  faults: GpuFault[];
}

export interface TimelineExtras {
  readiness: readonly ReadinessTransition[];
  currentReadiness?: Readiness;
  operations: readonly Operation[];
  faults: readonly GpuFault[];
}

export function useTimelineLayout({
  win,
  width,
  gutter,
  nowMs,
  transitions,
  current,
  unobserved,
  markers,
  timeZone,
  extras,
}: {
  win: TimeWindow;
  width: number;
  gutter: TimeGutter;
  nowMs: number;
  transitions: Parameters<typeof buildSegments>[0];
  current?: CurrentStateFallback;
  unobserved: readonly ObservationGap[];
  markers: readonly ActionMarker[];
  timeZone?: string;
  extras: TimelineExtras;
}): TimelineLayout {
  const { fromMs, toMs } = win;
  const segments = useMemo(() => buildSegments(transitions, fromMs, toMs, nowMs, current), [transitions, fromMs, toMs, nowMs, current]);
  const scale = useMemo(() => timeScale(fromMs, toMs, width, { left: gutter.left, right: gutter.right }), [fromMs, toMs, width, gutter.left, gutter.right]);
  const boxes = useMemo(() => layoutSegments(segments, scale), [segments, scale]);
  const gapBoxes = useMemo(() => layoutGaps(unobserved, scale), [unobserved, scale]);
  const visibleMarkers = useMemo(() => markersInView(markers, fromMs, toMs), [markers, fromMs, toMs]);
  const ticks = useMemo(
    () => (width > 0 ? timeTicks(fromMs, toMs, scale.width, { timeZone, labelRoomPx: { left: gutter.left, right: gutter.right } }) : []),
    [fromMs, toMs, scale.width, width, timeZone, gutter.left, gutter.right],
  );
  const { readiness, currentReadiness, operations, faults } = extras;
  const readinessSegments = useMemo(
    () => buildReadinessSegments(readiness, fromMs, toMs, nowMs, currentReadiness),
    [readiness, fromMs, toMs, nowMs, currentReadiness],
  );
  const readinessBoxes = useMemo(() => layoutReadiness(readinessSegments, scale), [readinessSegments, scale]);
  const operationSpans = useMemo(() => layoutOperations(operations, scale, nowMs), [operations, scale, nowMs]);
  const visibleFaults = useMemo(() => faultsInView(faults, fromMs, toMs), [faults, fromMs, toMs]);
  const summary = useMemo(
    () => [summarizeSegments(segments, nowMs), summarizeReadiness(readinessSegments, nowMs)].filter(Boolean).join(" "),
    [segments, readinessSegments, nowMs],
  );
  return {
    segments,
    scale,
    boxes,
    gapBoxes,
    markers: visibleMarkers,
    ticks,
    summary,
    readinessSegments,
    readinessBoxes,
    operations: operationSpans,
    faults: visibleFaults,
  };
}
