import { describe, expect, it } from "vitest";
import { formatDay, formatDuration, formatDurationShort, formatGiBNumber, formatMiB, formatSystemdTimestamp, formatTime, formatUsedOfTotal } from "./format";

describe("formatDuration", () => {
  it.each([
    [0, "0 ms"],
    [450.7, "450 ms"],
    [1_000, "1.0 s"],
    [1_450, "1.4 s"],
    [9_999, "9.9 s"],
    [34_200, "34 s"],
    [59_999, "59 s"],
    [60_000, "1 min 00 s"],
    [125_000, "2 min 05 s"],
    [3_599_000, "59 min 59 s"],
    [3_600_000, "1 h 00 min"],
    [3_720_000, "1 h 02 min"],
    [86_400_000, "1 d 0 h"],
    [3 * 86_400_000 + 4 * 3_600_000 + 59 * 60_000, "3 d 4 h"],
  ])("%d ms → %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it("shows clock skew (negative) as zero and non-numbers as a dash", () => {
    expect(formatDuration(-5_000)).toBe("0 ms");
    expect(formatDuration(Number.NaN)).toBe("—");
  });

  it("has a compact form", () => {
    expect(formatDurationShort(34_000)).toBe("34s");
    expect(formatDurationShort(125_000)).toBe("2m05s");
    expect(formatDurationShort(3_720_000)).toBe("1h02m");
    expect(formatDurationShort(90_000_000)).toBe("1d1h");
  });
});

describe("formatTime", () => {
  // 2025-01-12T13:03:27.123Z
  const t = Date.UTC(2025, 0, 12, 13, 3, 27, 123);

  it("formats in the given zone on a 24 h clock", () => {
    expect(formatTime(t, { timeZone: "UTC" })).toBe("13:03:27");
    expect(formatTime(t, { timeZone: "Europe/Berlin" })).toBe("14:03:27");
    expect(formatTime(t, { timeZone: "Asia/Kolkata" })).toBe("18:33:27");
    expect(formatTime(Date.UTC(2025, 0, 12, 0, 5), { timeZone: "UTC" })).toBe("00:05:00");
  });

  it("drops seconds or adds milliseconds on request", () => {
    expect(formatTime(t, { timeZone: "UTC", seconds: false })).toBe("13:03");
    expect(formatTime(t, { timeZone: "UTC", millis: true })).toBe("13:03:27.123");
  });

  it("adds the date always, or only when the day differs from a reference", () => {
    expect(formatTime(t, { timeZone: "UTC", date: "always" })).toBe("12 Jan 13:03:27");
    const sameDay = Date.UTC(2025, 0, 12, 23, 0);
    const nextDay = Date.UTC(2025, 0, 13, 1, 0);
    expect(formatTime(t, { timeZone: "UTC", date: "auto", relativeToMs: sameDay })).toBe("13:03:27");
    expect(formatTime(t, { timeZone: "UTC", date: "auto", relativeToMs: nextDay })).toBe("12 Jan 13:03:27");
    expect(formatDay(t, "UTC")).toBe("12 Jan");
  });
});

describe("formatSystemdTimestamp", () => {
  it("keeps all six microsecond digits", () => {
    const usec = Date.UTC(2025, 0, 12, 13, 3, 27) * 1000 + 123_456;
    expect(formatSystemdTimestamp(usec, "UTC")).toBe("Sun 2025-01-12 13:03:27.123456 UTC");
    expect(formatSystemdTimestamp(usec + 1, "UTC")).toBe("Sun 2025-01-12 13:03:27.123457 UTC");
    expect(formatSystemdTimestamp(Date.UTC(2025, 0, 12) * 1000 + 7, "UTC")).toBe("Sun 2025-01-12 00:00:00.000007 UTC");
  });

  it("says n/a for systemd's zero (never)", () => {
    expect(formatSystemdTimestamp(0)).toBe("n/a");
  });
});

describe("memory", () => {
  it("formats MiB and GiB and never turns null into 0", () => {
    expect(formatMiB(512)).toBe("512 MiB");
    expect(formatMiB(1536)).toBe("1.5 GiB");
    expect(formatMiB(77_005)).toBe("75.2 GiB");
    expect(formatMiB(143_771)).toBe("140 GiB");
    expect(formatMiB(null)).toBe("n/a");
    expect(formatGiBNumber(0)).toBe("0.0");
  });

  it("formats used of total with unknown parts spelled out", () => {
    expect(formatUsedOfTotal(77_005, 144_384)).toBe("75.2 / 141 GiB");
    expect(formatUsedOfTotal(null, null)).toBe("memory not reported");
    expect(formatUsedOfTotal(2048, null)).toBe("2.0 GiB / total n/a");
    expect(formatUsedOfTotal(null, 144_384)).toBe("n/a / 141 GiB");
  });
});
