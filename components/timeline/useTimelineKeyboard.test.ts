import { describe, expect, it } from "vitest";
import { keyCommand } from "./useTimelineKeyboard";

const SPAN = 30 * 60_000;
const press = (key: string, shiftKey = false) => ({ key, shiftKey });
const segment = { kind: "segment" as const, index: 2 };

describe("keyCommand on the plot", () => {
  it("←/→ pan a tenth of the window, a half with Shift", () => {
    expect(keyCommand(press("ArrowLeft"), null, SPAN, false)).toEqual({ type: "view", action: { type: "pan", deltaMs: -SPAN * 0.1 } });
    expect(keyCommand(press("ArrowRight"), null, SPAN, false)).toEqual({ type: "view", action: { type: "pan", deltaMs: SPAN * 0.1 } });
    expect(keyCommand(press("ArrowLeft", true), null, SPAN, false)).toEqual({ type: "view", action: { type: "pan", deltaMs: -SPAN * 0.5 } });
    expect(keyCommand(press("ArrowRight", true), null, SPAN, false)).toEqual({ type: "view", action: { type: "pan", deltaMs: SPAN * 0.5 } });
  });

  it("+/= zoom in, −/_ zoom out, by two", () => {
    for (const k of ["+", "="]) expect(keyCommand(press(k), null, SPAN, false)).toEqual({ type: "view", action: { type: "zoom", factor: 0.5 } });
    for (const k of ["-", "_"]) expect(keyCommand(press(k), null, SPAN, false)).toEqual({ type: "view", action: { type: "zoom", factor: 2 } });
  });

  it("L and End go live", () => {
    for (const k of ["l", "L", "End"]) expect(keyCommand(press(k), null, SPAN, false)).toEqual({ type: "view", action: { type: "live" } });
  });

  it("Esc closes an open tooltip, and is left alone when there is none", () => {
    expect(keyCommand(press("Escape"), null, SPAN, true)).toEqual({ type: "tip", event: { type: "close" } });
    expect(keyCommand(press("Escape"), null, SPAN, false)).toBeNull();
  });

  it("other keys are not ours; Home and Enter do nothing on the plot itself", () => {
    for (const k of ["a", "Tab", "ArrowUp", "Home", "Enter", " "]) expect(keyCommand(press(k), null, SPAN, false)).toBeNull();
  });
});

describe("keyCommand on an item", () => {
  it("←/→/Home/End move focus within its list instead of panning or going live", () => {
    for (const k of ["ArrowLeft", "ArrowRight", "Home", "End"])
      expect(keyCommand(press(k), segment, SPAN, false)).toEqual({ type: "move-focus", item: segment, key: k });
    expect(keyCommand(press("ArrowLeft", true), segment, SPAN, false)).toMatchObject({ type: "move-focus" });
  });

  it("Enter and Space toggle its pinned tooltip", () => {
    for (const k of ["Enter", " "])
      expect(keyCommand(press(k), segment, SPAN, true)).toEqual({ type: "tip", event: { type: "toggle", kind: "segment", index: 2 } });
  });

  it("zoom and Esc work as on the plot", () => {
    expect(keyCommand(press("+"), segment, SPAN, false)).toEqual({ type: "view", action: { type: "zoom", factor: 0.5 } });
    expect(keyCommand(press("Escape"), segment, SPAN, true)).toEqual({ type: "tip", event: { type: "close" } });
  });
});
