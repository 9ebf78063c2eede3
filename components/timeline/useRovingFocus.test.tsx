// @vitest-environment happy-dom
import { afterEach, describe, expect, it } from "vitest";
import { isRovingKey, rovingStop, rovingTarget, useRovingFocus } from "./useRovingFocus";
import { fire, focus, key, mount, type Mounted } from "./domTestKit";

describe("rovingTarget", () => {
  it("moves one step, or to the ends, and stays inside the list", () => {
    expect(rovingTarget("ArrowLeft", 2, 5)).toBe(1);
    expect(rovingTarget("ArrowRight", 2, 5)).toBe(3);
    expect(rovingTarget("Home", 2, 5)).toBe(0);
    expect(rovingTarget("End", 2, 5)).toBe(4);
    expect(rovingTarget("ArrowLeft", 0, 5)).toBe(0);
    expect(rovingTarget("ArrowRight", 4, 5)).toBe(4);
    // an index left over from a longer list comes back inside
    expect(rovingTarget("ArrowLeft", 9, 5)).toBe(4);
  });

  it("knows its keys", () => {
    expect(["ArrowLeft", "ArrowRight", "Home", "End"].every(isRovingKey)).toBe(true);
    expect(["ArrowUp", "Enter", "Tab", "l"].some(isRovingKey)).toBe(false);
  });
});

describe("rovingStop", () => {
  it("is the last focused item while it exists, else the newest", () => {
    expect(rovingStop(null, 4)).toBe(3);
    expect(rovingStop(1, 4)).toBe(1);
    expect(rovingStop(6, 4)).toBe(3);
  });
});

/** A plain list using the hook the way the timeline's lists do. */
function List({ count }: { count: number }) {
  const roving = useRovingFocus(count);
  return (
    <ul>
      {Array.from({ length: count }, (_, i) => (
        <li
          key={i}
          ref={roving.ref(i)}
          tabIndex={roving.tabIndex(i)}
          data-i={i}
          onFocus={() => roving.focused(i)}
          onKeyDown={(e) => {
            if (isRovingKey(e.key)) roving.move(e.key, i);
          }}
        >
          {`item ${i}`}
        </li>
      ))}
    </ul>
  );
}

describe("useRovingFocus in a DOM", () => {
  let ui: Mounted;
  afterEach(() => ui.unmount());
  const items = () => [...ui.container.querySelectorAll("li")];
  const stops = () => items().filter((li) => li.tabIndex === 0);
  const active = () => document.activeElement as HTMLElement;

  it("keeps exactly one tab stop, the newest item at first", () => {
    ui = mount(<List count={3} />);
    expect(stops()).toEqual([items()[2]]);
  });

  it("moves focus and the tab stop with the keys", () => {
    ui = mount(<List count={3} />);
    focus(items()[2]!);
    fire(active(), key("ArrowLeft"));
    expect(active().dataset.i).toBe("1");
    expect(stops()).toEqual([items()[1]]);
    fire(active(), key("Home"));
    expect(active().dataset.i).toBe("0");
    fire(active(), key("End"));
    expect(active().dataset.i).toBe("2");
  });

  it("remembers an item focused by other means (Tab, click)", () => {
    ui = mount(<List count={3} />);
    focus(items()[0]!);
    expect(stops()).toEqual([items()[0]]);
  });

  it("falls back to the newest item when the remembered one is gone", () => {
    ui = mount(<List count={5} />);
    focus(items()[4]!);
    ui.rerender(<List count={2} />);
    expect(stops()).toEqual([items()[1]]);
  });
});
