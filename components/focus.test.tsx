// @vitest-environment happy-dom
import { act, useRef, useState } from "react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { fire, focus, mount, type Mounted } from "./timeline/domTestKit";
import { canHoldFocus, trapTab, useFocusRescue } from "./focus";

// happy-dom lays nothing out: a shown element gets one box, a hidden one (or inside one) none
beforeEach(() => {
  vi.spyOn(HTMLElement.prototype, "getClientRects").mockImplementation(function (this: HTMLElement) {
    return (this.closest("[hidden]") ? [] : [{}]) as unknown as DOMRectList;
  });
});
let m: Mounted | null = null;
afterEach(() => {
  m?.unmount();
  m = null;
  vi.restoreAllMocks();
});

const tab = (root: HTMLElement, shiftKey = false) => trapTab({ key: "Tab", shiftKey, preventDefault: () => {} }, root);

describe("trapTab", () => {
  it("cycles from the last control to the first and back with Shift+Tab, skipping disabled and hidden ones", () => {
    m = mount(
      <div>
        <button>a</button>
        <button disabled>off</button>
        <input aria-label="b" />
        <button hidden>gone</button>
        <button>c</button>
      </div>,
    );
    const root = m.container.firstElementChild as HTMLElement;
    const [a, , b, , c] = [...root.children] as HTMLElement[];
    focus(c!);
    expect(tab(root)).toBe(true);
    expect(document.activeElement).toBe(a);
    expect(tab(root, true)).toBe(true);
    expect(document.activeElement).toBe(c);
    // in the middle the browser moves on by itself
    focus(b!);
    expect(tab(root)).toBe(false);
    expect(document.activeElement).toBe(b);
    expect(trapTab({ key: "Enter", shiftKey: false, preventDefault: () => {} }, root)).toBe(false);
  });

  it("knows which elements can hold focus", () => {
    m = mount(
      <div>
        <button>on</button>
        <button disabled>off</button>
        <div inert>
          <button>inert</button>
        </div>
      </div>,
    );
    const buttons = [...m.container.querySelectorAll("button")];
    expect(buttons.map(canHoldFocus)).toEqual([true, false, false]);
    const gone = buttons[0]!;
    gone.remove();
    expect(canHoldFocus(gone)).toBe(false);
  });
});

/** an action button that, pressed, goes away (or is disabled) and leaves a status box behind */
function Actions({ then }: { then: "remove" | "disable" }) {
  const root = useRef<HTMLDivElement>(null);
  useFocusRescue(root, (r) => r.querySelector<HTMLElement>("[data-focus-fallback]"));
  const [done, setDone] = useState(false);
  return (
    <div>
      <div ref={root}>
        {!(done && then === "remove") && (
          <button disabled={done && then === "disable"} onClick={() => setDone(true)}>
            Kill
          </button>
        )}
        <button>Other</button>
        {done && (
          <p tabIndex={-1} data-focus-fallback="">
            Kill sent.
          </p>
        )}
      </div>
      <button>Outside</button>
    </div>
  );
}

const flush = () => act(() => new Promise((r) => setTimeout(r, 50)));

describe("useFocusRescue", () => {
  for (const then of ["remove", "disable"] as const) {
    it(`moves focus to the status box when the focused control is ${then === "remove" ? "removed" : "disabled"}`, async () => {
      m = mount(<Actions then={then} />);
      const kill = m.container.querySelector("button")!;
      focus(kill);
      fire(kill, new MouseEvent("click", { bubbles: true }));
      await flush();
      expect(document.activeElement?.textContent).toBe("Kill sent.");
    });
  }

  it("leaves focus alone when it moves on elsewhere, or the user clicks away", async () => {
    m = mount(<Actions then="remove" />);
    const [, other, outside] = [...m.container.querySelectorAll("button")];
    focus(other!);
    focus(outside!);
    await flush();
    expect(document.activeElement).toBe(outside);
    focus(other!);
    act(() => other!.blur());
    await flush();
    expect(document.activeElement).toBe(document.body);
  });
});
