/**
 * The timeline's vertical layout, in px from the top of its SVG: a row for action markers, gap
 * handles, operations and faults; the state lane; for a unit with an inference engine the
 * readiness lane just under it; then the time axis. The tooltip hangs just below the lanes.
 */
export const MARKER_ROW = 20;
export const LANE = 44;
export const AXIS = 22;
export const LANE_TOP = MARKER_ROW;
/** the readiness lane: narrower than the state lane, a little apart from it */
export const READINESS_GAP = 4;
export const READINESS_LANE = 28;
/** the height without the readiness lane */
export const HEIGHT = MARKER_ROW + LANE + AXIS;

export interface TimelineFrame {
  /** the readiness lane's top, or null when it is not drawn */
  readinessTop: number | null;
  /** where the lanes end: markers and cursors are drawn down to here, the axis starts here */
  lanesBottom: number;
  height: number;
}

export function timelineFrame(withReadiness: boolean): TimelineFrame {
  const stateBottom = LANE_TOP + LANE;
  if (!withReadiness) return { readinessTop: null, lanesBottom: stateBottom, height: HEIGHT };
  const readinessTop = stateBottom + READINESS_GAP;
  const lanesBottom = readinessTop + READINESS_LANE;
  return { readinessTop, lanesBottom, height: lanesBottom + AXIS };
}

/** The frame without the readiness lane (components' default). */
export const PLAIN_FRAME: TimelineFrame = timelineFrame(false);
