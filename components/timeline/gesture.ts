/**
 * Pointer gestures on the plot as a reducer: one pointer dragged pans, two pointers pinched
 * zoom around their midpoint. Pure (pointer events in, view actions out) so the arithmetic is
 * tested without a browser; usePointerPanZoom feeds it real events.
 *
 * A gesture is measured from where it began (the window then, the pointers' x then), not from
 * the previous move, so rounding does not add up over a long drag.
 */
import type { TimeScale } from "./layout";
import type { TimeWindow, ViewAction } from "./view";

/** A press becomes a drag after this many px; below it, it is still a click on what is under it. */
export const DRAG_THRESHOLD_PX = 5;
/** Fingers closer than this do not pinch (their distance is too noisy to scale by). */
export const PINCH_MIN_PX = 10;

interface Gesture {
  startWin: TimeWindow;
  startX: number;
  startDist: number;
  startMid: number;
  dragging: boolean;
}

export interface GestureState {
  /** pressed pointers: id → x in plot px, in the order they went down */
  pointers: ReadonlyMap<number, number>;
  gesture: Gesture | null;
}

export const NO_GESTURE: GestureState = { pointers: new Map(), gesture: null };

export type PointerInput =
  | { type: "down"; id: number; x: number; pointerType: string; button: number; win: TimeWindow }
  | { type: "move"; id: number; x: number; pointerType: string }
  /** up or cancel */
  | { type: "up"; id: number; win: TimeWindow };

export interface GestureStep {
  state: GestureState;
  /** how the view should change */
  view?: ViewAction;
  /** the gesture just became a drag: capture the pointer so it keeps coming outside the plot */
  capture?: boolean;
  /** a mouse moving over the plot without a button pressed: the time under it */
  hoverMs?: number;
}

function begin(pointers: ReadonlyMap<number, number>, win: TimeWindow): Gesture {
  const xs = [...pointers.values()];
  const startX = xs[0] ?? 0;
  const pinch = xs.length >= 2;
  return {
    startWin: { fromMs: win.fromMs, toMs: win.toMs },
    startX,
    startDist: pinch ? Math.abs(xs[0]! - xs[1]!) : 0,
    startMid: pinch ? (xs[0]! + xs[1]!) / 2 : startX,
    // with two pointers there is no click to protect
    dragging: pinch,
  };
}

export function reduceGesture(state: GestureState, input: PointerInput, scale: TimeScale): GestureStep {
  switch (input.type) {
    case "down": {
      if (input.pointerType === "mouse" && input.button !== 0) return { state };
      const pointers = new Map(state.pointers).set(input.id, input.x);
      return { state: { pointers, gesture: begin(pointers, input.win) } };
    }
    case "up": {
      const pointers = new Map(state.pointers);
      pointers.delete(input.id);
      // the fingers still down start a new gesture from here
      return { state: { pointers, gesture: pointers.size === 0 ? null : begin(pointers, input.win) } };
    }
    case "move":
      return move(state, input, scale);
  }
}

function move(state: GestureState, input: { id: number; x: number; pointerType: string }, scale: TimeScale): GestureStep {
  const { x } = input;
  if (!state.pointers.has(input.id)) {
    const overPlot = x >= scale.left && x <= scale.left + scale.width;
    return input.pointerType === "mouse" && overPlot ? { state, hoverMs: scale.ms(x) } : { state };
  }
  const pointers = new Map(state.pointers).set(input.id, x);
  const g = state.gesture;
  if (!g) return { state: { pointers, gesture: g } };
  const span = g.startWin.toMs - g.startWin.fromMs;
  const xs = [...pointers.values()];
  if (xs.length >= 2 && g.startDist > PINCH_MIN_PX) {
    // Keep the time that was under the first midpoint under the current one.
    const dist = Math.max(PINCH_MIN_PX, Math.abs(xs[0]! - xs[1]!));
    const mid = (xs[0]! + xs[1]!) / 2;
    const newSpan = (span * g.startDist) / dist;
    const anchorMs = g.startWin.fromMs + ((g.startMid - scale.left) / scale.width) * span;
    const fromMs = anchorMs - ((mid - scale.left) / scale.width) * newSpan;
    return { state: { pointers, gesture: g }, view: { type: "set", fromMs, toMs: fromMs + newSpan } };
  }
  const dx = x - g.startX;
  if (!g.dragging && Math.abs(dx) < DRAG_THRESHOLD_PX) return { state: { pointers, gesture: g } };
  const shiftMs = dx * (span / scale.width);
  return {
    state: { pointers, gesture: g.dragging ? g : { ...g, dragging: true } },
    view: { type: "set", fromMs: g.startWin.fromMs - shiftMs, toMs: g.startWin.toMs - shiftMs },
    capture: !g.dragging,
  };
}
