import { describe, expect, it } from "vitest";
import { timelineSince } from "@/components/useUnitHistory";

const DAY = 24 * 3600_000;

describe("timelineSince: the query key of the range's start", () => {
  it("is the same day for a prefetch and a choice minutes later (5-minute steps past 12 h)", () => {
    const t = Date.UTC(2026, 11, 3, 14, 0, 10);
    expect(timelineSince(t - DAY, t)).toBe(timelineSince(t + 4 * 60_000 - DAY, t + 4 * 60_000));
    expect(timelineSince(t + 5 * 60_000 - DAY, t + 5 * 60_000)).toBe(timelineSince(t - DAY, t) + 5 * 60_000);
  });

  it("keeps the minute for short ranges, never later than asked", () => {
    const t = Date.UTC(2026, 11, 3, 14, 0, 10);
    const since = t - 15 * 60_000;
    expect(timelineSince(since, t)).toBe(Date.UTC(2026, 11, 3, 13, 45, 0));
    expect(timelineSince(t - DAY + 123_456, t)).toBeLessThanOrEqual(t - DAY + 123_456);
  });
});
