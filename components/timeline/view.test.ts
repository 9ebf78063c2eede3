import { describe, expect, it } from "vitest";
import { MIN_SPAN_MS, RANGE_MS, followView, reduceView, resolveWindow, type ViewState } from "./view";

const now = Date.UTC(2025, 0, 12, 12, 0);
const ctx = { nowMs: now, rangeMs: RANGE_MS["1h"] };
const min = 60_000;

describe("view window", () => {
  it("follows now across the whole range by default", () => {
    const v = followView(ctx.rangeMs);
    expect(resolveWindow(v, now)).toEqual({ fromMs: now - 60 * min, toMs: now });
    expect(resolveWindow(v, now + 5000)).toEqual({ fromMs: now - 60 * min + 5000, toMs: now + 5000 });
  });

  it("zooms in while following with the right edge kept at now", () => {
    const v = reduceView(followView(ctx.rangeMs), { type: "zoom", factor: 0.5 }, ctx);
    expect(v).toEqual({ follow: true, spanMs: 30 * min });
  });

  it("zooms around the anchor and keeps it at the same place", () => {
    const fixed: ViewState = { follow: false, fromMs: now - 40 * min, toMs: now - 20 * min };
    const anchor = now - 35 * min; // a quarter into the window
    const v = reduceView(fixed, { type: "zoom", factor: 0.5, anchorMs: anchor }, ctx);
    const w = resolveWindow(v, now);
    expect(w.toMs - w.fromMs).toBe(10 * min);
    expect((anchor - w.fromMs) / (w.toMs - w.fromMs)).toBeCloseTo(0.25, 9);
  });

  it("limits zoom to [10 s, range]", () => {
    let v = followView(ctx.rangeMs);
    for (let i = 0; i < 50; i++) v = reduceView(v, { type: "zoom", factor: 0.5 }, ctx);
    expect(v).toEqual({ follow: true, spanMs: MIN_SPAN_MS });
    for (let i = 0; i < 50; i++) v = reduceView(v, { type: "zoom", factor: 2 }, ctx);
    expect(v).toEqual({ follow: true, spanMs: ctx.rangeMs });
  });

  it("stops following when panned into the past and resumes when panned back to now", () => {
    const zoomed = reduceView(followView(ctx.rangeMs), { type: "zoom", factor: 0.25 }, ctx); // 15 min
    const back = reduceView(zoomed, { type: "pan", deltaMs: -10 * min }, ctx);
    expect(back).toEqual({ follow: false, fromMs: now - 25 * min, toMs: now - 10 * min });
    const forward = reduceView(back, { type: "pan", deltaMs: 10 * min }, ctx);
    expect(forward).toEqual({ follow: true, spanMs: 15 * min });
    // panning into the future while following does nothing
    expect(reduceView(forward, { type: "pan", deltaMs: min }, ctx)).toBe(forward);
  });

  it("keeps the window inside the loaded range", () => {
    const zoomed = reduceView(followView(ctx.rangeMs), { type: "zoom", factor: 0.25 }, ctx);
    const far = reduceView(zoomed, { type: "pan", deltaMs: -10 * 60 * min }, ctx);
    expect(far).toEqual({ follow: false, fromMs: now - 60 * min, toMs: now - 45 * min });
    // at full range there is nowhere to pan
    expect(reduceView(followView(ctx.rangeMs), { type: "pan", deltaMs: -5 * min }, ctx)).toEqual({ follow: true, spanMs: 60 * min });
  });

  it("sets a window from a drag, snapping to following when it reaches now", () => {
    expect(reduceView(followView(ctx.rangeMs), { type: "set", fromMs: now - 30 * min, toMs: now - 20 * min }, ctx)).toEqual({
      follow: false,
      fromMs: now - 30 * min,
      toMs: now - 20 * min,
    });
    expect(reduceView(followView(ctx.rangeMs), { type: "set", fromMs: now - 5 * min, toMs: now + 5 * min }, ctx)).toEqual({
      follow: true,
      spanMs: 10 * min,
    });
  });

  it("returns to following the full range on Live", () => {
    const fixed: ViewState = { follow: false, fromMs: now - 40 * min, toMs: now - 20 * min };
    expect(reduceView(fixed, { type: "live" }, ctx)).toEqual({ follow: true, spanMs: 60 * min });
  });
});
