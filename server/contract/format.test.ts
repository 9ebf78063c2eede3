import { describe, expect, it } from "vitest";
import {
  exitStatusHint,
  formatClock,
  formatCmdline,
  formatDay,
  formatDuration,
  formatDurationShort,
  formatDurationWords,
  formatExit,
  formatGiBNumber,
  formatGpus,
  formatIndexList,
  formatMiB,
  formatMiBRounded,
  formatRate,
  formatState,
  formatSystemdTimestamp,
  formatTime,
  formatTimestamp,
  formatUsecSetting,
  formatUsedOfTotal,
  isInfiniteUsec,
  plural,
  shortUuid,
  signalName,
  signalNumber,
  truncate,
} from "./format";

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
    // no clock yet (a page hydrating): the date, and no RangeError from Intl
    expect(formatTime(t, { timeZone: "UTC", date: "auto", relativeToMs: NaN })).toBe("12 Jan 13:03:27");
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

// --- sentences ---

describe("formatDurationWords", () => {
  it.each([
    [0, "<1 s"],
    [400, "<1 s"],
    [999, "<1 s"],
    [1000, "1 s"],
    [14_000, "14 s"],
    [28_476, "28 s"],
    [59_400, "59 s"],
    [59_600, "1 min"],
    [62_000, "1 min 2 s"],
    [90_000, "1 min 30 s"],
    [3_599_000, "59 min 59 s"],
    [3_600_000, "1 h"],
    [3 * 3_600_000 + 12 * 60_000 + 20_000, "3 h 12 min"],
    [24 * 3_600_000, "1 d"],
    [3 * 86_400_000 + 4 * 3_600_000, "3 d 4 h"],
  ])("%d ms → %s", (ms, text) => {
    expect(formatDurationWords(ms)).toBe(text);
  });

  it("formats negative durations by magnitude and infinity in words", () => {
    expect(formatDurationWords(-3_000)).toBe("3 s");
    expect(formatDurationWords(Infinity)).toBe("forever");
  });
});

describe("systemd µs settings", () => {
  it("treats 0 and UINT64_MAX as infinity", () => {
    expect(isInfiniteUsec(0)).toBe(true);
    expect(isInfiniteUsec(18446744073709551615)).toBe(true);
    expect(isInfiniteUsec(Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(isInfiniteUsec(90_000_000)).toBe(false);
    expect(formatUsecSetting(18446744073709551615)).toBe("infinity");
    expect(formatUsecSetting(90_000_000)).toBe("1 min 30 s");
  });
});

describe("formatMiBRounded / formatRate", () => {
  it.each([
    [0, "0 MiB"],
    [512, "512 MiB"],
    [1023.4, "1023 MiB"],
    [1023.6, "1 GiB"],
    [1024, "1 GiB"],
    [1536, "1.5 GiB"],
    [10 * 1024, "10 GiB"],
    [598 * 1024, "598 GiB"],
    [612_352.4, "598 GiB"],
    [8 * 143_771, "1123 GiB"],
  ])("%d MiB → %s", (mib, text) => {
    expect(formatMiBRounded(mib)).toBe(text);
  });

  it("formats rates", () => {
    expect(formatRate(21 * 1024)).toBe("21 GiB/s");
    expect(formatRate(350)).toBe("350 MiB/s");
  });
});

describe("GPU index lists", () => {
  it.each([
    [[0, 1, 2, 3, 4, 5, 6, 7], "0–7"],
    [[0, 2, 5], "0, 2, 5"],
    [[6, 0, 1, 2, 3], "0–3, 6"],
    [[4, 5], "4, 5"],
    [[3], "3"],
    [[1, 1, 2, 3], "1–3"],
    [[0, 1, 2, 4, 5, 6], "0–2, 4–6"],
    [[], ""],
  ])("%j → %s", (indexes, text) => {
    expect(formatIndexList(indexes)).toBe(text);
  });

  it("names one GPU, many GPUs, and GPUs whose index is unknown", () => {
    const ref = (index: number | null, uuid = `GPU-${index ?? "x"}`) => ({ index, uuid });
    expect(formatGpus([ref(3)])).toBe("GPU 3");
    expect(formatGpus([0, 1, 2, 3, 4, 5, 6, 7].map((i) => ref(i)))).toBe("GPUs 0–7");
    expect(formatGpus([ref(0), ref(0)])).toBe("GPU 0");
    expect(formatGpus([ref(0), ref(null, "GPU-1a2b3c4d-0000-1111-2222-333344445555")])).toBe("GPUs 0, GPU-1a2b3c4d");
    expect(formatGpus([])).toBe("no GPUs");
  });

  it("shortens uuids", () => {
    expect(shortUuid("GPU-1a2b3c4d-0000-1111-2222-333344445555")).toBe("GPU-1a2b3c4d");
    expect(shortUuid("MIG-abcdef01-0000")).toBe("MIG-abcdef01");
    expect(shortUuid("weird")).toBe("weird");
  });
});

describe("formatCmdline", () => {
  it("quotes what a shell would need quoted", () => {
    expect(formatCmdline(["/usr/bin/vllm", "serve", "--port", "8000"])).toBe("/usr/bin/vllm serve --port 8000");
    expect(formatCmdline(["bash", "-c", "sleep 1; echo it's"])).toBe(`bash -c 'sleep 1; echo it'\\''s'`);
    expect(formatCmdline(["x", ""])).toBe("x ''");
  });

  it("truncates long command lines and flattens newlines", () => {
    const text = formatCmdline(["python3", "-c", "a".repeat(300)], 40);
    expect(text).toHaveLength(40);
    expect(text.endsWith("…")).toBe(true);
    expect(truncate("line one\nline two", 100)).toBe("line one ⏎ line two");
  });
});

describe("signals and exits", () => {
  it("names signals both ways", () => {
    expect(signalName(9)).toBe("SIGKILL");
    expect(signalName(11)).toBe("SIGSEGV");
    expect(signalName(77)).toBe("signal 77");
    expect(signalNumber("KILL")).toBe(9);
    expect(signalNumber("SIGTERM")).toBe(15);
    expect(signalNumber("6")).toBe(6);
    expect(signalNumber("NOPE")).toBeNull();
  });

  it("describes CLD_* exits", () => {
    expect(formatExit(1, 1)).toBe("exit code 1");
    expect(formatExit(2, 9)).toBe("killed by SIGKILL");
    expect(formatExit(3, 11)).toBe("dumped core (SIGSEGV)");
    expect(formatExit(0, 0)).toBeNull();
  });

  it("hints at well-known exit statuses", () => {
    expect(exitStatusHint(203)).toMatch(/EXEC/);
    expect(exitStatusHint(127)).toMatch(/not found/);
    expect(exitStatusHint(137)).toMatch(/SIGKILL/);
    expect(exitStatusHint(42)).toBeNull();
  });
});

describe("times and states", () => {
  it("formats UTC timestamps and clocks", () => {
    const ms = Date.UTC(2025, 4, 1, 3, 12, 9, 500);
    expect(formatTimestamp(ms)).toBe("2025-05-01 03:12:09 UTC");
    expect(formatClock(ms)).toBe("03:12:09");
  });

  it("formats state pairs without flattening them", () => {
    expect(formatState({ activeState: "activating", subState: "start-pre" })).toBe("activating (start-pre)");
    expect(formatState({ activeState: "failed", subState: "failed" })).toBe("failed");
  });

  it("pluralises", () => {
    expect(plural(1, "restart")).toBe("1 restart");
    expect(plural(3, "restart")).toBe("3 restarts");
    expect(plural(2, "process", "processes")).toBe("2 processes");
  });
});
