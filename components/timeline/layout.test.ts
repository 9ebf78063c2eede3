import { describe, expect, it } from "vitest";
import type { TimelineSegment } from "./segments";
import { CLUSTER_BELOW_PX, MIN_SEGMENT_PX, clusterBreakdown, layoutGaps, layoutSegments, timeScale } from "./layout";

function seg(startMs: number, endMs: number, activeState: string, subState: string): TimelineSegment {
  return {
    startMs,
    endMs,
    realStartMs: startMs,
    realEndMs: endMs,
    startUsec: startMs * 1000,
    endUsec: endMs * 1000,
    activeState,
    subState,
    result: "success",
    inRestartCycle: false,
    open: false,
    startUnknown: false,
    clippedStart: false,
    clippedEnd: false,
    nRestarts: null,
    mainPid: null,
    controlPid: null,
  };
}

describe("timeScale", () => {
  it("maps the window onto [gutter.left, width - gutter.right]", () => {
    const s = timeScale(1000, 2000, 556, { left: 44, right: 12 });
    expect(s.x(1000)).toBe(44);
    expect(s.x(2000)).toBe(544);
    expect(s.ms(294)).toBe(1500);
  });
});

describe("layoutSegments", () => {
  const scale = timeScale(0, 1000, 1000 + 44 + 12); // 1 ms per px

  it("labels wide segments, shortens or drops labels on narrow ones", () => {
    const boxes = layoutSegments([seg(0, 400, "activating", "start-pre"), seg(400, 470, "active", "running"), seg(470, 480, "active", "running")], scale);
    expect(boxes.map((b) => (b.kind === "segment" ? b.label : "cluster"))).toEqual(["activating (start-pre)", "running", null]);
  });

  it("keeps a single narrow state as its own sliver of at least MIN_SEGMENT_PX", () => {
    const boxes = layoutSegments([seg(0, 500, "active", "running"), seg(500, 500.5, "activating", "start-pre"), seg(500.5, 1000, "active", "running")], scale);
    expect(boxes).toHaveLength(3);
    expect(boxes[1]).toMatchObject({ kind: "segment", width: MIN_SEGMENT_PX });
  });

  it("merges runs of narrow states into one cluster styled by the longest state", () => {
    const loop = [];
    for (let t = 100; t < 200; t += 4) {
      loop.push(seg(t, t + 2.5, "activating", "start-pre"), seg(t + 2.5, t + 3, "failed", "failed"), seg(t + 3, t + 4, "activating", "auto-restart"));
    }
    const boxes = layoutSegments([seg(0, 100, "active", "running"), ...loop, seg(200, 1000, "active", "running")], scale);
    expect(boxes.map((b) => b.kind)).toEqual(["segment", "cluster", "segment"]);
    const c = boxes[1]!;
    if (c.kind !== "cluster") throw new Error("expected a cluster");
    expect(c.segments).toHaveLength(75);
    expect(c.style.label).toBe("activating (start-pre)");
    expect(c.x).toBe(144);
    expect(c.width).toBe(100);
    expect(c.label).toBe("75 changes");
    expect(clusterBreakdown(c.segments).map((e) => [e.style.label, e.count])).toEqual([
      ["activating (start-pre)", 25],
      ["activating (auto-restart)", 25],
      ["failed", 25],
    ]);
    expect(CLUSTER_BELOW_PX).toBeGreaterThan(MIN_SEGMENT_PX);
  });

  it("keeps boxes inside the plot at the right edge", () => {
    const boxes = layoutSegments([seg(999.9, 1000, "failed", "failed")], scale);
    expect(boxes[0]!.x + boxes[0]!.width).toBeLessThanOrEqual(scale.left + scale.width);
  });
});

describe("layoutGaps", () => {
  const scale = timeScale(1000, 2000, 1000 + 44 + 12); // 1 ms per px, window 1000..2000 at x 44..1044

  it("places a span inside the window with the segments' x", () => {
    const [g, ...rest] = layoutGaps([{ fromMs: 1200, toMs: 1500 }], scale);
    expect(rest).toHaveLength(0);
    expect(g).toEqual({ fromMs: 1200, toMs: 1500, startMs: 1200, endMs: 1500, clippedStart: false, clippedEnd: false, x: scale.x(1200), width: 300 });
  });

  it("clips a span reaching outside the window to its edges and keeps the real ends", () => {
    const [before, after] = layoutGaps(
      [
        { fromMs: 500, toMs: 1100 },
        { fromMs: 1900, toMs: 2600 },
      ],
      scale,
    );
    expect(before).toMatchObject({ fromMs: 500, toMs: 1100, startMs: 1000, endMs: 1100, clippedStart: true, clippedEnd: false, x: 44, width: 100 });
    expect(after).toMatchObject({ fromMs: 1900, toMs: 2600, startMs: 1900, endMs: 2000, clippedStart: false, clippedEnd: true, x: 944, width: 100 });
    expect(after!.x + after!.width).toBe(scale.left + scale.width);
    const [all] = layoutGaps([{ fromMs: 0, toMs: 5000 }], scale);
    expect(all).toMatchObject({ startMs: 1000, endMs: 2000, clippedStart: true, clippedEnd: true, x: 44, width: 1000 });
  });

  it("drops spans outside the window (touching an edge is outside) and empty or malformed ones", () => {
    expect(
      layoutGaps(
        [
          { fromMs: 0, toMs: 999 },
          { fromMs: 0, toMs: 1000 },
          { fromMs: 2000, toMs: 2500 },
          { fromMs: 1500, toMs: 1500 },
          { fromMs: 1600, toMs: 1400 },
          { fromMs: Number.NaN, toMs: 1400 },
        ],
        scale,
      ),
    ).toEqual([]);
  });

  it("sorts and merges overlapping spans; a sub-pixel span still gets a sliver inside the plot", () => {
    const boxes = layoutGaps(
      [
        { fromMs: 1700, toMs: 1800 },
        { fromMs: 1100, toMs: 1300 },
        { fromMs: 1250, toMs: 1400 },
        { fromMs: 1999.8, toMs: 2000 },
      ],
      scale,
    );
    expect(boxes.map((b) => [b.fromMs, b.toMs])).toEqual([
      [1100, 1400],
      [1700, 1800],
      [1999.8, 2000],
    ]);
    const sliver = boxes[2]!;
    expect(sliver.width).toBe(MIN_SEGMENT_PX);
    expect(sliver.x + sliver.width).toBeLessThanOrEqual(scale.left + scale.width);
  });
});
