/**
 * Keys on the timeline. On an item (segment, marker, gap handle): ←/→/Home/End move focus within
 * its list, Enter or Space pins its tooltip. Anywhere on the plot: ←/→ pan a tenth of the window
 * (Shift: a half), +/− zoom by two, L or End go live, Esc closes the tooltip.
 */
import type { KeyboardEvent as ReactKeyboardEvent } from "react";
import { itemOfElement, type ItemKind, type ItemRef } from "./items";
import { isRovingKey, type RovingFocus, type RovingKey } from "./useRovingFocus";
import type { TipEvent } from "./useTimelineTooltip";
import type { ViewAction } from "./view";

export type KeyCommand = { type: "move-focus"; item: ItemRef; key: RovingKey } | { type: "tip"; event: TipEvent } | { type: "view"; action: ViewAction };

/** What a key does; null: not ours, let the browser have it. */
export function keyCommand(e: { key: string; shiftKey: boolean }, item: ItemRef | null, spanMs: number, tipOpen: boolean): KeyCommand | null {
  if (item && isRovingKey(e.key)) return { type: "move-focus", item, key: e.key };
  if (item && (e.key === "Enter" || e.key === " ")) return { type: "tip", event: { type: "toggle", kind: item.kind, index: item.index } };
  const view = (action: ViewAction): KeyCommand => ({ type: "view", action });
  switch (e.key) {
    case "ArrowLeft":
      return view({ type: "pan", deltaMs: -spanMs * (e.shiftKey ? 0.5 : 0.1) });
    case "ArrowRight":
      return view({ type: "pan", deltaMs: spanMs * (e.shiftKey ? 0.5 : 0.1) });
    case "+":
    case "=":
      return view({ type: "zoom", factor: 0.5 });
    case "-":
    case "_":
      return view({ type: "zoom", factor: 2 });
    case "l":
    case "L":
    case "End":
      return view({ type: "live" });
    case "Escape":
      return tipOpen ? { type: "tip", event: { type: "close" } } : null;
    default:
      return null;
  }
}

export function useTimelineKeyboard({
  spanMs,
  tipOpen,
  dispatch,
  sendTip,
  roving,
}: {
  spanMs: number;
  tipOpen: boolean;
  dispatch: (action: ViewAction) => void;
  sendTip: (event: TipEvent) => void;
  roving: Readonly<Record<ItemKind, RovingFocus>>;
}): (e: ReactKeyboardEvent<HTMLElement>) => void {
  return (e) => {
    const command = keyCommand(e, itemOfElement(e.target as Element), spanMs, tipOpen);
    if (!command) return;
    if (command.type === "move-focus") roving[command.item.kind].move(command.key, command.item.index);
    else if (command.type === "tip") sendTip(command.event);
    else dispatch(command.action);
    e.preventDefault();
  };
}
