/**
 * The three kinds of things on the timeline that take focus and carry a tooltip: lane segments
 * (or clusters), action markers and the handles of spans no agent watched. Each list item has
 * its index in a data attribute, which is how keys and clicks find what they hit.
 */
export type ItemKind = "segment" | "marker" | "gap";

export interface ItemRef {
  kind: ItemKind;
  index: number;
}

export const ITEM_ATTR: Readonly<Record<ItemKind, string>> = { segment: "data-seg", marker: "data-marker", gap: "data-gap" };

/** Matches any item, e.g. for closest(). */
export const ITEM_SELECTOR = "[data-seg],[data-marker],[data-gap]";

/** The item an element is (not an ancestor's), or null. */
export function itemOfElement(el: Element | null): ItemRef | null {
  if (!el?.getAttribute) return null;
  for (const kind of ["segment", "marker", "gap"] as const) {
    const index = el.getAttribute(ITEM_ATTR[kind]);
    if (index != null) return { kind, index: Number(index) };
  }
  return null;
}

/** Whether a click landed on an item or inside one (its shapes and labels). */
export function isInsideItem(el: Element | null): boolean {
  return el?.closest?.(ITEM_SELECTOR) != null;
}
