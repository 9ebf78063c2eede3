import { describe, expect, it } from "vitest";
import { tickStepMs, timeTicks, utcOffsetMinutes } from "./ticks";

const T = Date.UTC(2025, 0, 12, 13, 3, 27);

describe("timeTicks", () => {
  it("picks a spacing that leaves room for the labels", () => {
    expect(tickStepMs(15 * 60_000, 800)).toBe(2 * 60_000); // 15 min over 800 px
    expect(tickStepMs(15 * 60_000, 300)).toBe(5 * 60_000); // phone width
    expect(tickStepMs(24 * 3_600_000, 800)).toBe(3 * 3_600_000);
    expect(tickStepMs(60_000, 1000)).toBe(5_000);
  });

  it("places ticks on round local times inside the window", () => {
    const from = T; // 13:03:27 UTC
    const to = T + 15 * 60_000;
    const ticks = timeTicks(from, to, 800, { timeZone: "UTC" });
    expect(ticks.map((t) => t.label)).toEqual(["13:04", "13:06", "13:08", "13:10", "13:12", "13:14", "13:16", "13:18"]);
    for (const t of ticks) {
      expect(t.atMs).toBeGreaterThanOrEqual(from);
      expect(t.atMs).toBeLessThanOrEqual(to);
      expect(t.atMs % 120_000).toBe(0);
    }
  });

  it("aligns to the local zone, including half-hour offsets", () => {
    const ticks = timeTicks(T, T + 6 * 3_600_000, 800, { timeZone: "Asia/Kolkata" });
    // 1 h spacing at 800 px; Kolkata is UTC+5:30 so local whole hours are UTC half hours
    expect(ticks[0]!.label).toBe("19:00");
    expect(ticks[0]!.atMs).toBe(Date.UTC(2025, 0, 12, 13, 30));
  });

  it("labels local midnight with the date and uses seconds for short spans", () => {
    const from = Date.UTC(2025, 0, 12, 18, 0);
    const day = timeTicks(from, from + 24 * 3_600_000, 800, { timeZone: "UTC" });
    const midnight = day.find((t) => t.isDayStart)!;
    expect(midnight.label).toBe("13 Jan");
    expect(midnight.atMs).toBe(Date.UTC(2025, 0, 13));
    const short = timeTicks(T, T + 60_000, 1000, { timeZone: "UTC" });
    expect(short[0]!.label).toBe("13:03:30");
  });

  it("drops ticks whose label would be cut off beyond the gutters", () => {
    const from = Date.UTC(2025, 0, 12, 11, 45);
    const to = Date.UTC(2025, 0, 12, 12, 0);
    const all = timeTicks(from, to, 944, { timeZone: "UTC" });
    expect(all[all.length - 1]!.label).toBe("12:00"); // sits on the right edge
    const fitted = timeTicks(from, to, 944, { timeZone: "UTC", labelRoomPx: { left: 44, right: 12 } });
    expect(fitted[fitted.length - 1]!.label).toBe("11:58");
    expect(fitted[0]!.label).toBe(all[0]!.label);
    expect(timeTicks(from, to, 944, { timeZone: "UTC", labelRoomPx: { left: 44, right: 20 } }).at(-1)!.label).toBe("12:00");
  });

  it("returns nothing for an empty window or zero width", () => {
    expect(timeTicks(T, T, 800)).toEqual([]);
    expect(timeTicks(T, T + 1000, 0)).toEqual([]);
  });

  it("knows zone offsets", () => {
    expect(utcOffsetMinutes(T, "UTC")).toBe(0);
    expect(utcOffsetMinutes(T, "Asia/Kolkata")).toBe(330);
    expect(utcOffsetMinutes(Date.UTC(2025, 6, 1), "Europe/Berlin")).toBe(120);
    expect(utcOffsetMinutes(T, "America/New_York")).toBe(-300);
  });
});
