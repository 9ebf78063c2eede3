/**
 * The kinds of things on the timeline that take focus and carry a tooltip: lane segments (or
 * clusters), readiness-lane boxes, action markers, GPU-aware operations, GPU faults and the
 * handles of spans no agent watched. Each list item has its index in a data attribute, which is
 * how keys and clicks find what they hit.
 */
export type ItemKind = "segment" | "readiness" | "marker" | "operation" | "fault" | "gap";

export const ITEM_KINDS: readonly ItemKind[] = ["segment", "readiness", "marker", "operation", "fault", "gap"];

export interface ItemRef {
  kind: ItemKind;
  index: number;
}

export const ITEM_ATTR: Readonly<Record<ItemKind, string>> = {
  segment: "data-seg",
  readiness: "data-ready",
  marker: "data-marker",
  operation: "data-op",
  fault: "data-fault",
  gap: "data-gap",
};

/** Matches any item, e.g. for closest(). */
export const ITEM_SELECTOR = ITEM_KINDS.map((k) => `[${ITEM_ATTR[k]}]`).join(",");

/** The item an element is (not an ancestor's), or null. */
export function itemOfElement(el: Element | null): ItemRef | null {
  if (!el?.getAttribute) return null;
  for (const kind of ITEM_KINDS) {
    const index = el.getAttribute(ITEM_ATTR[kind]);
    if (index != null) return { kind, index: Number(index) };
  }
  return null;
}

/** Whether a click landed on an item or inside one (its shapes and labels). */
export function isInsideItem(el: Element | null): boolean {
  return el?.closest?.(ITEM_SELECTOR) != null;
}
