// @vitest-environment happy-dom
import { describe, expect, it } from "vitest";
import { isInsideItem, itemOfElement } from "./items";

function svg(html: string): Element {
  const host = document.createElement("div");
  host.innerHTML = `<svg>${html}</svg>`;
  return host.firstElementChild!;
}

describe("items", () => {
  it("reads the kind and index from the item's data attribute", () => {
    const root = svg('<g data-seg="3"></g><g data-marker="0"></g><g data-gap="1"></g><g></g>');
    const [a, b, c, none] = [...root.children];
    expect(itemOfElement(a!)).toEqual({ kind: "segment", index: 3 });
    expect(itemOfElement(b!)).toEqual({ kind: "marker", index: 0 });
    expect(itemOfElement(c!)).toEqual({ kind: "gap", index: 1 });
    expect(itemOfElement(none!)).toBeNull();
    const [r, o, f] = [...svg('<g data-ready="2"></g><g data-op="0"></g><g data-fault="4"></g>').children];
    expect([itemOfElement(r!), itemOfElement(o!), itemOfElement(f!)]).toEqual([
      { kind: "readiness", index: 2 },
      { kind: "operation", index: 0 },
      { kind: "fault", index: 4 },
    ]);
    expect(itemOfElement(null)).toBeNull();
  });

  it("only the item itself is the item; its shapes are inside it", () => {
    const root = svg('<g data-seg="0"><rect></rect></g><rect></rect>');
    const shape = root.querySelector("g > rect")!;
    expect(itemOfElement(shape)).toBeNull();
    expect(isInsideItem(shape)).toBe(true);
    expect(isInsideItem(root.lastElementChild)).toBe(false);
  });
});
