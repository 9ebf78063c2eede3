/**
 * The timeline's vertical layout, in px from the top of its SVG: a row for action markers and
 * gap handles, the state lane, then the time axis. The tooltip hangs just below the lane.
 */
export const MARKER_ROW = 20;
export const LANE = 44;
export const AXIS = 22;
export const HEIGHT = MARKER_ROW + LANE + AXIS;
export const LANE_TOP = MARKER_ROW;
