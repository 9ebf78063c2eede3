/**
 * Roving focus for one list of items (WAI-ARIA "roving tabindex"): the list is a single tab
 * stop, ←/→ move to the neighbour, Home/End to the ends. The tab stop is the item last focused,
 * or the newest (last) one, which on a timeline is the one nearest now.
 *
 * The timeline has three such lists (segments, markers, gap handles), each its own instance.
 */
import { useRef, useState } from "react";

export type RovingKey = "ArrowLeft" | "ArrowRight" | "Home" | "End";

export function isRovingKey(key: string): key is RovingKey {
  return key === "ArrowLeft" || key === "ArrowRight" || key === "Home" || key === "End";
}

/** The index a key moves to from `index` in a list of `count`, kept inside the list. */
export function rovingTarget(key: RovingKey, index: number, count: number): number {
  const next = key === "Home" ? 0 : key === "End" ? count - 1 : index + (key === "ArrowLeft" ? -1 : 1);
  return Math.max(0, Math.min(count - 1, next));
}

/** Which item is the tab stop: the last focused while it still exists, else the last one. */
export function rovingStop(focused: number | null, count: number): number {
  return focused != null && focused < count ? focused : count - 1;
}

export interface RovingFocus {
  /** 0 for the tab stop, -1 for the rest */
  tabIndex(index: number): 0 | -1;
  /** ref callback for the item's element */
  ref(index: number): (el: SVGElement | HTMLElement | null) => void;
  /** record that the item got focus some other way (Tab, click) */
  focused(index: number): void;
  /** move focus as the key says, from the item at `index` */
  move(key: RovingKey, index: number): void;
}

export function useRovingFocus(count: number): RovingFocus {
  const [focusedIndex, setFocusedIndex] = useState<number | null>(null);
  const elements = useRef<(SVGElement | HTMLElement | null)[]>([]);
  const stop = rovingStop(focusedIndex, count);
  return {
    tabIndex: (index) => (index === stop ? 0 : -1),
    ref: (index) => (el) => {
      elements.current[index] = el;
    },
    focused: setFocusedIndex,
    move: (key, index) => {
      const next = rovingTarget(key, index, count);
      setFocusedIndex(next);
      elements.current[next]?.focus();
    },
  };
}
