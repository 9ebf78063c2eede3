import { describe, expect, it } from "vitest";
import { timeScale } from "@/components/timeline/layout";
import { memPlot, nearestIndex, yStep } from "./memPlot";

const gutter = { left: 44, right: 12 };
// a 100 px × 100 px plot: x(s) = 44 + s for 0–100 s, y from 108 (0) up to 8
const base = { fromMs: 0, toMs: 100_000, width: 156, height: 132, gutter };
const points = (d: string) => d.split(/[MLZ]/).filter(Boolean);

describe("memPlot", () => {
  it("puts the plot where the timeline's scale puts it: gutter.left wide, the x axis under it", () => {
    const g = memPlot({ ...base, xs: [], cumulative: [], total: [], ticks: [{ atMs: 50_000, label: "12:00" }] });
    expect(g.plot).toEqual({ left: 44, right: 144, top: 8, bottom: 108 });
    expect(g.xTicks).toEqual([{ x: timeScale(0, 100_000, 156, gutter).x(50_000), label: "12:00" }]);
    expect(g.xTicks[0]!.x).toBe(94);
  });

  it("stacks each class on the one below: a band from the running sum under it to its own", () => {
    const g = memPlot({
      ...base,
      xs: [0, 50, 100],
      cumulative: [
        [100, 100, 100],
        [100, 200, 100],
      ],
      total: [1000, 1000, 1000],
    });
    // the scale goes to 6 % over the highest value (the ceiling): 1060 MiB
    const y = (v: number) => String(Math.round((108 - (v / 1060) * 100) * 10) / 10);
    expect(points(g.bands[0]!)).toEqual([`44 ${y(100)}`, `94 ${y(100)}`, `144 ${y(100)}`, "144 108", "94 108", "44 108"]);
    // the second band's bottom edge is the first band's top edge
    expect(points(g.bands[1]!)).toEqual([`44 ${y(100)}`, `94 ${y(200)}`, `144 ${y(100)}`, `144 ${y(100)}`, `94 ${y(100)}`, `44 ${y(100)}`]);
    expect(g.total).toBe(`M44 ${y(1000)}L94 ${y(1000)}L144 ${y(1000)}`);
    expect(g.yMax).toBe(1060);
  });

  it("breaks every band and the ceiling where a row has no values: a gap, not an area through it", () => {
    const g = memPlot({ ...base, xs: [0, 25, 50, 75, 100], cumulative: [[5, 5, null, 5, 5]], total: [9, 9, null, 9, 9] });
    expect(g.bands[0]!.match(/M/g)).toHaveLength(2);
    expect(g.bands[0]!.match(/Z/g)).toHaveLength(2);
    expect(g.total.match(/M/g)).toHaveLength(2);
  });

  it("draws nothing for a class that holds nothing, and edges a band only where it has height", () => {
    const g = memPlot({
      ...base,
      xs: [0, 25, 50, 75, 100],
      cumulative: [
        [10, 10, 10, 10, 10],
        [10, 10, 30, 10, 10],
        [10, 10, 30, 10, 10],
      ],
      total: [40, 40, 40, 40, 40],
      edged: [1, 2],
    });
    expect(g.bands[2]).toBe("");
    // the exited band has height at 50 s only: its edge runs from 25 s to 75 s
    expect(points(g.edges[0]!).map((p) => p.split(" ")[0])).toEqual(["69", "94", "119"]);
    expect(g.edges[0]!.startsWith("M69 ")).toBe(true);
    expect(g.edges[1]).toBe("");
  });

  it("labels the y axis in round GiB steps at least 30 px apart", () => {
    const g = memPlot({ ...base, xs: [0, 100], cumulative: [[0, 0]], total: [2 * 143_771, 2 * 143_771] });
    expect(g.yTicks.map((t) => t.label)).toEqual(["0", "100", "200"]);
    expect(g.yTicks[0]!.y).toBe(108);
    // no values at all: 0 to 1 GiB
    expect(memPlot({ ...base, xs: [], cumulative: [], total: [] }).yTicks.map((t) => t.label)).toEqual(["0", "1.0"]);
  });

  it("leaves out time ticks outside the window", () => {
    const g = memPlot({
      ...base,
      xs: [],
      cumulative: [],
      total: [],
      ticks: [
        { atMs: -1, label: "a" },
        { atMs: 100_001, label: "b" },
      ],
    });
    expect(g.xTicks).toEqual([]);
  });
});

describe("yStep", () => {
  it("takes the smallest round step with room", () => {
    expect(yStep(1060, 100)).toBe(1024);
    expect(yStep(300 * 1024, 200)).toBe(50 * 1024);
  });
});

describe("nearestIndex", () => {
  it("finds the sample nearest the pointer, the earlier one on a tie", () => {
    const xs = [0, 10, 20];
    expect([-5, 4, 5, 6, 19, 25].map((s) => nearestIndex(xs, s))).toEqual([0, 0, 0, 1, 2, 2]);
    expect(nearestIndex([], 3)).toBeNull();
  });
});
