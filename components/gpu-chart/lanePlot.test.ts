import { describe, expect, it } from "vitest";
import { laneGeometry, roundDown } from "./lanePlot";

const gutter = { left: 40, right: 10 };
const base = { width: 150, height: 44, gutter };

describe("laneGeometry", () => {
  it("draws a series across the plot, 0 at the bottom and a round tick under the highest value", () => {
    const g = laneGeometry({ ...base, xs: [0, 50, 100], series: [[0, 22, 11]] });
    expect(g.plot).toEqual({ left: 40, right: 140, top: 4, bottom: 44 });
    // x: 0 → 40, 50 → 90, 100 → 140; y: 22 is drawn under the top (the scale goes to 24.2)
    expect(g.paths[0]).toBe("M40 44L90 7.6L140 25.8");
    expect(g.ticks.map((t) => t.label)).toEqual(["0", "22"]);
    expect(g.ticks[0]!.y).toBe(44);
  });

  it("breaks the line where a value was not reported: a gap, not a line through it", () => {
    const g = laneGeometry({ ...base, xs: [0, 1, 2, 3], series: [[5, null, 5, 5]] });
    expect(g.paths[0]!.match(/M/g)).toHaveLength(2);
    expect(laneGeometry({ ...base, xs: [0, 1], series: [[null, null]] }).paths[0]).toBe("");
  });

  it("keeps a fixed range (utilisation 0–100) and labels its top", () => {
    const g = laneGeometry({ ...base, xs: [0, 1], series: [[50, 50]], range: [0, 100] });
    expect(g.paths[0]).toBe("M40 24L140 24");
    expect(g.ticks.map((t) => t.label)).toEqual(["0", "100"]);
  });

  it("draws the window asked for, with one point either side so lines reach the edges", () => {
    const g = laneGeometry({ ...base, xs: [0, 10, 20, 30, 40], series: [[1, 2, 3, 4, 5]], win: { fromMs: 15_000, toMs: 25_000 } });
    // 10 s (left of the window), 20 s, 30 s (right of it): three points, 0 s and 40 s left out
    expect(g.paths[0]!.split(/[ML]/).filter(Boolean)).toHaveLength(3);
    expect(g.paths[0]!.startsWith("M-10 ")).toBe(true);
  });

  it("scales to the values in view, not to a peak outside the window", () => {
    const g = laneGeometry({ ...base, xs: [0, 10, 20, 30], series: [[1000, 1000, 10, 10]], win: { fromMs: 25_000, toMs: 30_000 } });
    expect(g.ticks.at(-1)!.label).toBe("10");
  });

  it("shades the spans where clocks were held down, joined where they touch", () => {
    const g = laneGeometry({ ...base, xs: [0, 25, 50, 75, 100], series: [[1, 1, 1, 1, 1]], throttled: [0, 1, 1, 0, null] });
    expect(g.held).toEqual([{ x: 65, w: 50 }]);
  });

  it("labels large values in thousands", () => {
    const g = laneGeometry({ ...base, xs: [0, 1], series: [[1500, 1980]] });
    expect(g.ticks.at(-1)!.label).toBe("1.9k");
  });
});

describe("roundDown", () => {
  it("rounds down to two significant digits", () => {
    expect([22, 950, 116, 7, 0.63, 1980, 0].map(roundDown)).toEqual([22, 950, 110, 7, 0.63, 1900, 0]);
  });
});
