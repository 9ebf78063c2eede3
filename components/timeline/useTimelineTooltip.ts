/**
 * Which item's tooltip is open, and whether it is pinned. Hover and focus open a passing one;
 * click, Enter or Space pin it. A pinned tooltip stays until it is closed (Esc, ×, a click on the
 * empty plot, the same item again) or another item is pinned, so it can be read and its link
 * followed while the pointer wanders.
 */
import { useState } from "react";
import type { ItemKind } from "./items";

export interface Tip {
  kind: ItemKind;
  index: number;
  pinned: boolean;
}

export type TipEvent =
  /** hover or focus */
  | { type: "show"; kind: ItemKind; index: number }
  /** pointer left, focus left */
  | { type: "hide" }
  /** click, Enter, Space: pin it, or close it when it is the pinned one */
  | { type: "toggle"; kind: ItemKind; index: number }
  /** Esc, ×, a click on the empty plot */
  | { type: "close" };

export function reduceTip(prev: Tip | null, event: TipEvent): Tip | null {
  switch (event.type) {
    case "show":
      return prev?.pinned ? prev : { kind: event.kind, index: event.index, pinned: false };
    case "hide":
      return prev?.pinned ? prev : null;
    case "toggle":
      return prev?.pinned && prev.kind === event.kind && prev.index === event.index ? null : { kind: event.kind, index: event.index, pinned: true };
    case "close":
      return null;
  }
}

/** The tip, unless its item is gone from view (zoomed or panned away, data changed). */
export function tipInView(tip: Tip | null, counts: Readonly<Record<ItemKind, number>>): Tip | null {
  return tip && tip.index < counts[tip.kind] ? tip : null;
}

/** Handlers that make an element a tooltip target. */
export interface TipTargetProps {
  onFocus(): void;
  onBlur(): void;
  onMouseEnter(): void;
  onMouseLeave(): void;
  onClick(): void;
}

export interface TimelineTooltip {
  /** the open tooltip, if its item is in view */
  tip: Tip | null;
  send(event: TipEvent): void;
  /** handlers for the item `index` of `kind`; onFocus also tells its roving focus */
  target(kind: ItemKind, index: number, onFocus?: (index: number) => void): TipTargetProps;
}

export function useTimelineTooltip(counts: Readonly<Record<ItemKind, number>>): TimelineTooltip {
  const [tip, setTip] = useState<Tip | null>(null);
  const send = (event: TipEvent) => setTip((prev) => reduceTip(prev, event));
  return {
    tip: tipInView(tip, counts),
    send,
    target: (kind, index, onFocus) => ({
      onFocus: () => {
        onFocus?.(index);
        send({ type: "show", kind, index });
      },
      onBlur: () => send({ type: "hide" }),
      onMouseEnter: () => send({ type: "show", kind, index }),
      onMouseLeave: () => send({ type: "hide" }),
      onClick: () => send({ type: "toggle", kind, index }),
    }),
  };
}
