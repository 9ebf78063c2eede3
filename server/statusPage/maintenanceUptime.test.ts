/** Planned maintenance left out of uptime: its time counts neither up nor down; overlapping windows count once. */
import { describe, expect, it } from "vitest";
import { upFraction, uptimes } from "./uptime";

const H = 3_600_000;

describe("uptime without the maintenance windows", () => {
  // up for 20 h, down for 4 h (the planned work), known all day
  const now = 24 * H;
  const steps = [
    { atMs: 0, up: true },
    { atMs: 20 * H, up: false },
  ];

  it("down only during the window: 100 % without it, 20/24 with it", () => {
    expect(upFraction(steps, now, 24 * H)).toBeCloseTo(20 / 24);
    expect(upFraction(steps, now, 24 * H, [{ startsAtMs: 20 * H, endsAtMs: 24 * H }])).toBe(1);
  });

  it("overlapping windows are counted once; a window over up time shrinks what is known", () => {
    const w = [
      { startsAtMs: 21 * H, endsAtMs: 23 * H },
      { startsAtMs: 22 * H, endsAtMs: 24 * H },
    ];
    // 1 h of the down time stays counted (20–21 h)
    expect(upFraction(steps, now, 24 * H, w)).toBeCloseTo(20 / 21);
    expect(upFraction(steps, now, 24 * H, [{ startsAtMs: 0, endsAtMs: 10 * H }])).toBeCloseTo(10 / 14);
  });

  it("all of the window excluded: nothing known", () => {
    expect(uptimes(steps, now, [{ startsAtMs: -40 * 24 * H, endsAtMs: now }])["24h"]).toBeNull();
  });
});
