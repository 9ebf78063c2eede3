/**
 * The timeline's view window as React state: which span is on screen for the selected range,
 * whether it follows now, and a dispatch for zoom/pan/live (rules in ./view.ts). A new range
 * resets the view to following now over all of it. Every change of the window is reported
 * (while following, that is every tick of the clock) so the GPU chart can draw the same span.
 */
import { useEffect, useEffectEvent, useState } from "react";
import { RANGE_MS, followView, reduceView, resolveWindow, type TimeRange, type TimeWindow, type ViewAction, type ViewState } from "./view";

/** The view, tagged with the range it was made for. */
export interface RangedView {
  range: TimeRange;
  view: ViewState;
}

/** The view for `range`: the stored one if made for it, else following now over the whole range. */
export function viewForRange(state: RangedView, range: TimeRange): ViewState {
  return state.range === range ? state.view : followView(RANGE_MS[range]);
}

export function reduceRangedView(state: RangedView, range: TimeRange, action: ViewAction, nowMs: number): RangedView {
  return { range, view: reduceView(viewForRange(state, range), action, { nowMs, rangeMs: RANGE_MS[range] }) };
}

export interface TimelineView {
  win: TimeWindow;
  following: boolean;
  /** the selected range's length: the widest window */
  rangeMs: number;
  dispatch(action: ViewAction): void;
}

export function useTimelineView({
  range,
  nowMs,
  onWindowChange,
}: {
  range: TimeRange;
  nowMs: number;
  onWindowChange?: (fromMs: number, toMs: number, following: boolean) => void;
}): TimelineView {
  const [state, setState] = useState<RangedView>(() => ({ range, view: followView(RANGE_MS[range]) }));
  const view = viewForRange(state, range);
  const win = resolveWindow(view, nowMs);

  // Report the window when it changes; the callback itself may be a new function each render.
  const reportWindow = useEffectEvent((fromMs: number, toMs: number, follow: boolean) => onWindowChange?.(fromMs, toMs, follow));
  useEffect(() => {
    reportWindow(win.fromMs, win.toMs, view.follow);
  }, [win.fromMs, win.toMs, view.follow]);

  return {
    win,
    following: view.follow,
    rangeMs: RANGE_MS[range],
    dispatch: (action) => setState((prev) => reduceRangedView(prev, range, action, nowMs)),
  };
}
