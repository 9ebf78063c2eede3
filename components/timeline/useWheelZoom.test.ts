import { describe, expect, it } from "vitest";
import { timeScale } from "./layout";
import { wheelViewAction, type WheelInput } from "./useWheelZoom";

const NOW = Date.UTC(2025, 0, 12, 12, 0);
const MIN = 60_000;
const scale = timeScale(NOW - 30 * MIN, NOW, 800, { left: 44, right: 12 });
const wheel = (w: Partial<WheelInput>): WheelInput => ({ deltaX: 0, deltaY: 0, deltaMode: 0, ctrlKey: false, metaKey: false, x: 400, ...w });

describe("wheelViewAction", () => {
  it("Ctrl or ⌘ + vertical wheel zooms around the pointer, 100 px per e-fold", () => {
    expect(wheelViewAction(wheel({ deltaY: -100, ctrlKey: true, x: 200 }), scale)).toEqual({ type: "zoom", factor: Math.exp(-1), anchorMs: scale.ms(200) });
    expect(wheelViewAction(wheel({ deltaY: 50, metaKey: true }), scale)).toEqual({ type: "zoom", factor: Math.exp(0.5), anchorMs: scale.ms(400) });
  });

  it("zooms by e at most per event, so one flick of a free-spinning wheel stays usable", () => {
    expect(wheelViewAction(wheel({ deltaY: -5000, ctrlKey: true }), scale)).toMatchObject({ factor: Math.exp(-1) });
    expect(wheelViewAction(wheel({ deltaY: 5000, ctrlKey: true }), scale)).toMatchObject({ factor: Math.exp(1) });
  });

  it("counts lines as 16 px and pages as 400 px", () => {
    expect(wheelViewAction(wheel({ deltaY: -2, deltaMode: 1, ctrlKey: true }), scale)).toMatchObject({ factor: Math.exp(-0.32) });
    expect(wheelViewAction(wheel({ deltaX: 1, deltaMode: 2 }), scale)).toEqual({ type: "pan", deltaMs: 400 * ((30 * MIN) / 744) });
  });

  it("anchors at the plot's edge when the pointer is over a gutter", () => {
    expect(wheelViewAction(wheel({ deltaY: -10, ctrlKey: true, x: 10 }), scale)).toMatchObject({ anchorMs: NOW - 30 * MIN });
    expect(wheelViewAction(wheel({ deltaY: -10, ctrlKey: true, x: 799 }), scale)).toMatchObject({ anchorMs: NOW });
  });

  it("a mostly horizontal wheel pans by its pixels", () => {
    expect(wheelViewAction(wheel({ deltaX: -74.4, deltaY: 3 }), scale)).toEqual({ type: "pan", deltaMs: -74.4 * ((30 * MIN) / 744) });
  });

  it("leaves a plain vertical wheel to the page", () => {
    expect(wheelViewAction(wheel({ deltaY: 100 }), scale)).toBeNull();
    expect(wheelViewAction(wheel({ deltaX: 5, deltaY: 5 }), scale)).toBeNull();
  });
});
