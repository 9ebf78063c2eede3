/**
 * Pointer input on the plot: drag (mouse or one finger) pans, pinch zooms, double-click zooms in
 * around the pointer, and a mouse moving over it reports the time under it (the GPU chart draws
 * a hairline there). The arithmetic is in ./gesture.ts; this hook feeds it events.
 */
import { useRef, type MouseEvent as ReactMouseEvent, type PointerEvent as ReactPointerEvent, type RefObject } from "react";
import { NO_GESTURE, reduceGesture, type GestureState, type PointerInput } from "./gesture";
import type { TimeScale } from "./layout";
import type { TimeWindow, ViewAction } from "./view";

/** clientX in the element's own px. */
export function plotX(el: Element | null, clientX: number): number {
  return clientX - (el?.getBoundingClientRect().left ?? 0);
}

export interface PlotPointerHandlers {
  onPointerDown(e: ReactPointerEvent<HTMLElement>): void;
  onPointerMove(e: ReactPointerEvent<HTMLElement>): void;
  onPointerUp(e: ReactPointerEvent<HTMLElement>): void;
  onPointerCancel(e: ReactPointerEvent<HTMLElement>): void;
  onPointerLeave(e: ReactPointerEvent<HTMLElement>): void;
  onDoubleClick(e: ReactMouseEvent<HTMLElement>): void;
}

export function usePointerPanZoom({
  plotRef,
  scale,
  win,
  dispatch,
  onHoverMs,
}: {
  plotRef: RefObject<HTMLElement | null>;
  scale: TimeScale;
  win: TimeWindow;
  dispatch: (action: ViewAction) => void;
  onHoverMs?: (ms: number | null) => void;
}): PlotPointerHandlers {
  const gesture = useRef<GestureState>(NO_GESTURE);

  const feed = (input: PointerInput, pointerId: number) => {
    const step = reduceGesture(gesture.current, input, scale);
    gesture.current = step.state;
    if (step.hoverMs != null) onHoverMs?.(step.hoverMs);
    // Capture only once it is a drag, so a plain click still reaches the segment under it.
    if (step.capture) plotRef.current?.setPointerCapture?.(pointerId);
    if (step.view) dispatch(step.view);
  };
  const x = (clientX: number) => plotX(plotRef.current, clientX);
  const up = (e: ReactPointerEvent<HTMLElement>) => feed({ type: "up", id: e.pointerId, win }, e.pointerId);

  return {
    onPointerDown: (e) => feed({ type: "down", id: e.pointerId, x: x(e.clientX), pointerType: e.pointerType, button: e.button, win }, e.pointerId),
    onPointerMove: (e) => feed({ type: "move", id: e.pointerId, x: x(e.clientX), pointerType: e.pointerType }, e.pointerId),
    onPointerUp: up,
    onPointerCancel: up,
    onPointerLeave: (e) => {
      if (e.pointerType === "mouse") onHoverMs?.(null);
    },
    onDoubleClick: (e) => dispatch({ type: "zoom", factor: 0.5, anchorMs: scale.ms(x(e.clientX)) }),
  };
}
