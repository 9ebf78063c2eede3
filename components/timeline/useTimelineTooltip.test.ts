import { describe, expect, it } from "vitest";
import { reduceTip, tipInView, type Tip, type TipEvent } from "./useTimelineTooltip";

const run = (events: TipEvent[], start: Tip | null = null) => events.reduce(reduceTip, start);
const show = (index: number): TipEvent => ({ type: "show", kind: "segment", index });
const toggle = (index: number, kind: Tip["kind"] = "segment"): TipEvent => ({ type: "toggle", kind, index });

describe("reduceTip", () => {
  it("hover and focus show a passing tooltip, leaving hides it", () => {
    expect(run([show(1)])).toEqual({ kind: "segment", index: 1, pinned: false });
    expect(run([show(1), show(2)])).toEqual({ kind: "segment", index: 2, pinned: false });
    expect(run([show(1), { type: "hide" }])).toBeNull();
  });

  it("a pinned tooltip ignores hover, focus and leaving", () => {
    const pinned = run([toggle(1)]);
    expect(pinned).toEqual({ kind: "segment", index: 1, pinned: true });
    expect(run([show(3), { type: "hide" }], pinned)).toBe(pinned);
  });

  it("toggling the pinned item closes it; toggling another pins that one", () => {
    expect(run([toggle(1), toggle(1)])).toBeNull();
    expect(run([toggle(1), toggle(1, "marker")])).toEqual({ kind: "marker", index: 1, pinned: true });
    expect(run([show(1), toggle(1)])).toEqual({ kind: "segment", index: 1, pinned: true });
  });

  it("close closes whatever is open", () => {
    expect(run([toggle(1), { type: "close" }])).toBeNull();
    expect(run([show(1), { type: "close" }])).toBeNull();
  });
});

describe("tipInView", () => {
  it("drops a tip whose item is no longer drawn", () => {
    const tip: Tip = { kind: "gap", index: 1, pinned: true };
    const counts = { segment: 5, readiness: 0, marker: 5, operation: 0, fault: 0, gap: 2 };
    expect(tipInView(tip, counts)).toBe(tip);
    expect(tipInView(tip, { ...counts, gap: 1 })).toBeNull();
    expect(tipInView(null, counts)).toBeNull();
    expect(tipInView({ kind: "readiness", index: 0, pinned: false }, counts)).toBeNull();
  });
});
