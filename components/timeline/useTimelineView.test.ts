import { describe, expect, it } from "vitest";
import { reduceRangedView, viewForRange, type RangedView } from "./useTimelineView";

const NOW = Date.UTC(2025, 0, 12, 12, 0);
const MIN = 60_000;

describe("the view per range", () => {
  const zoomed: RangedView = { range: "1h", view: { follow: false, fromMs: NOW - 40 * MIN, toMs: NOW - 20 * MIN } };

  it("keeps the view made for the selected range", () => {
    expect(viewForRange(zoomed, "1h")).toBe(zoomed.view);
  });

  it("a new range starts over, following now across all of it", () => {
    expect(viewForRange(zoomed, "6h")).toEqual({ follow: true, spanMs: 6 * 60 * MIN });
  });

  it("applies actions within the selected range's bounds", () => {
    expect(reduceRangedView(zoomed, "1h", { type: "pan", deltaMs: -30 * MIN }, NOW)).toEqual({
      range: "1h",
      view: { follow: false, fromMs: NOW - 60 * MIN, toMs: NOW - 40 * MIN },
    });
    // an action after the range changed applies to the new range's fresh view
    expect(reduceRangedView(zoomed, "15m", { type: "zoom", factor: 2 }, NOW)).toEqual({ range: "15m", view: { follow: true, spanMs: 15 * MIN } });
    expect(reduceRangedView(zoomed, "1h", { type: "live" }, NOW)).toEqual({ range: "1h", view: { follow: true, spanMs: 60 * MIN } });
  });
});
