import { describe, expect, it } from "vitest";
import type { TimelineSegment } from "./segments";
import { CLUSTER_BELOW_PX, MIN_SEGMENT_PX, clusterBreakdown, layoutSegments, timeScale } from "./layout";

function seg(startMs: number, endMs: number, activeState: string, subState: string): TimelineSegment {
  return {
    startMs, endMs, realStartMs: startMs, realEndMs: endMs, startUsec: startMs * 1000, endUsec: endMs * 1000,
    activeState, subState, result: "success", inRestartCycle: false, open: false, startUnknown: false,
    clippedStart: false, clippedEnd: false, nRestarts: null, mainPid: null, controlPid: null,
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
