/**
 * Helpers for the timeline's DOM tests (happy-dom, `// @vitest-environment happy-dom`): mount a
 * React tree, fire native events inside act(), and give elements a layout, which happy-dom does
 * not compute. Test-only; nothing in the app imports it.
 */
import { act, type ReactElement } from "react";
import { createRoot } from "react-dom/client";
import { vi } from "vitest";

// Tells React that updates are wrapped in act(), so it flushes them before act() returns.
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

export interface Mounted {
  container: HTMLDivElement;
  rerender(node: ReactElement): void;
  unmount(): void;
}

export function mount(node: ReactElement): Mounted {
  const container = document.createElement("div");
  document.body.append(container);
  const root = createRoot(container);
  act(() => root.render(node));
  return {
    container,
    rerender: (next) => act(() => root.render(next)),
    unmount: () => {
      act(() => root.unmount());
      container.remove();
    },
  };
}

/** Dispatches a native event inside act() and returns it (to check defaultPrevented). */
export function fire<E extends Event>(target: EventTarget, event: E): E {
  act(() => {
    target.dispatchEvent(event);
  });
  return event;
}

export function focus(el: Element): void {
  act(() => (el as HTMLElement).focus());
}

export function pointer(type: "pointerdown" | "pointermove" | "pointerup" | "pointercancel", init: PointerEventInit = {}): PointerEvent {
  return new PointerEvent(type, { bubbles: true, cancelable: true, pointerId: 1, pointerType: "mouse", button: 0, ...init });
}

export function key(name: string, init: KeyboardEventInit = {}): KeyboardEvent {
  return new KeyboardEvent("keydown", { key: name, bubbles: true, cancelable: true, ...init });
}

/** happy-dom's WheelEvent is a UIEvent without clientX and modifier keys: add them as browsers have them. */
export function wheel(init: { deltaX?: number; deltaY?: number; deltaMode?: number; clientX?: number; ctrlKey?: boolean; metaKey?: boolean }): WheelEvent {
  const e = new WheelEvent("wheel", { bubbles: true, cancelable: true, deltaX: init.deltaX ?? 0, deltaY: init.deltaY ?? 0, deltaMode: init.deltaMode ?? 0 });
  for (const [name, value] of [
    ["clientX", init.clientX ?? 0],
    ["ctrlKey", init.ctrlKey ?? false],
    ["metaKey", init.metaKey ?? false],
  ] as const)
    Object.defineProperty(e, name, { value });
  return e;
}

export function mouse(type: "mouseover" | "mouseout" | "click" | "dblclick", init: MouseEventInit = {}): MouseEvent {
  return new MouseEvent(type, { bubbles: true, cancelable: true, ...init });
}

/** Every element measures `width` px wide at the viewport's left edge (x = clientX). Restore with vi.restoreAllMocks(). */
export function stubLayout(width: number, height = 100): void {
  vi.spyOn(HTMLElement.prototype, "getBoundingClientRect").mockReturnValue({
    x: 0,
    y: 0,
    left: 0,
    top: 0,
    width,
    height,
    right: width,
    bottom: height,
    toJSON: () => ({}),
  } as DOMRect);
}
