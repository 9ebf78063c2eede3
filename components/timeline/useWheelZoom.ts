/**
 * The wheel on the plot: pinch on a touchpad or Ctrl/⌘+wheel zooms around the pointer, a
 * horizontal wheel pans; a plain vertical wheel is left to scroll the page (a timeline that
 * captures it traps people scrolling past).
 */
import { useEffect, useEffectEvent, type RefObject } from "react";
import type { TimeScale } from "./layout";
import { plotX } from "./usePointerPanZoom";
import type { ViewAction } from "./view";

export interface WheelInput {
  deltaX: number;
  deltaY: number;
  /** 0 px, 1 lines, 2 pages (WheelEvent.deltaMode) */
  deltaMode: number;
  ctrlKey: boolean;
  metaKey: boolean;
  /** pointer x in the plot's px */
  x: number;
}

/** px per delta unit: a line is ~16 px, a page ~400 px of wheel */
const DELTA_PX = [1, 16, 400];
/** zoom factor per px of vertical wheel, in e-folds (100 px ≈ ×e) */
const ZOOM_PER_PX = 0.01;

/** What a wheel event does to the view, or null to let the page scroll. */
export function wheelViewAction(w: WheelInput, scale: TimeScale): ViewAction | null {
  const unit = DELTA_PX[w.deltaMode] ?? 1;
  if (w.ctrlKey || w.metaKey) {
    // Browsers report a touchpad pinch as Ctrl+wheel. One event zooms by e at most.
    const factor = Math.exp(Math.max(-1, Math.min(1, w.deltaY * unit * ZOOM_PER_PX)));
    const x = Math.max(scale.left, Math.min(scale.left + scale.width, w.x));
    return { type: "zoom", factor, anchorMs: scale.ms(x) };
  }
  if (Math.abs(w.deltaX) > Math.abs(w.deltaY)) return { type: "pan", deltaMs: w.deltaX * unit * ((scale.toMs - scale.fromMs) / scale.width) };
  return null;
}

export function useWheelZoom(plotRef: RefObject<HTMLElement | null>, scale: TimeScale, dispatch: (action: ViewAction) => void): void {
  const onWheel = useEffectEvent((e: WheelEvent) => {
    const { deltaX, deltaY, deltaMode, ctrlKey, metaKey } = e;
    const action = wheelViewAction({ deltaX, deltaY, deltaMode, ctrlKey, metaKey, x: plotX(plotRef.current, e.clientX) }, scale);
    if (!action) return;
    e.preventDefault();
    dispatch(action);
  });
  // A native listener: React's wheel listener is passive, and zoom must preventDefault.
  useEffect(() => {
    const el = plotRef.current;
    if (!el) return;
    const listener = (e: WheelEvent) => onWheel(e);
    el.addEventListener("wheel", listener, { passive: false });
    return () => el.removeEventListener("wheel", listener);
  }, [plotRef]);
}
