// @vitest-environment happy-dom
import { act } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { mount, type Mounted } from "./timeline/domTestKit";
import { LazyConfirmDialog } from "./LazyConfirmDialog";

let m: Mounted | null = null;
afterEach(() => {
  m?.unmount();
  m = null;
});

const dialog = (open: boolean) => (
  <LazyConfirmDialog open={open} title="Stop x?" confirmLabel="Stop x" onConfirm={() => {}} onCancel={() => {}}>
    <p>what it stops</p>
  </LazyConfirmDialog>
);

describe("LazyConfirmDialog", () => {
  it("is not in the page until it first opens, then stays (closed) after", async () => {
    // happy-dom's <dialog> has showModal/close; count the calls
    const shown = vi.spyOn(HTMLDialogElement.prototype, "showModal");
    m = mount(dialog(false));
    expect(m.container.querySelector("dialog")).toBeNull();

    // its code arrives (a dynamic import), then it opens whole
    await act(async () => {
      m!.rerender(dialog(true));
      await import("./ConfirmDialog");
    });
    await act(async () => {});
    const d = m.container.querySelector("dialog")!;
    expect(d.textContent).toContain("what it stops");
    expect(d.textContent).toContain("Stop x?");
    expect(shown).toHaveBeenCalledTimes(1);

    await act(async () => m!.rerender(dialog(false)));
    // still mounted, so closing gave focus back the way ConfirmDialog does
    expect(m.container.querySelector("dialog")).toBe(d);
    expect(d.open).toBe(false);
    shown.mockRestore();
  });
});
