/**
 * Maintenance windows, pure: which units a window covers, when a one-off or a recurring window
 * holds (a recurring one keeps its local time across daylight-saving changes), what `create`
 * accepts (ISO 8601 with a zone, or epoch ms), and the config file's windows.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { applyConfigFile } from "../config/configFile";
import { createMaintenanceInput } from "../contract/maintenance";
import {
  coversUnit,
  maintenanceFromEnv,
  MaintenanceError,
  maintenanceUntil,
  nextOccurrence,
  occurrenceAt,
  occurrencesBetween,
  windowView,
  type MaintenanceWindow,
} from "./maintenance";

const H = 3_600_000;
const base: MaintenanceWindow = {
  id: 1,
  name: "w",
  units: ["gpu-a:vllm-*"],
  startsAtMs: null,
  endsAtMs: null,
  cron: null,
  durationMinutes: null,
  timeZone: null,
  excludeFromUptime: true,
  source: "panel",
  createdBy: "ada",
  createdAtMs: 0,
  endedAtMs: null,
  endedBy: null,
};
const oneOff = (startsAtMs: number, endsAtMs: number, over: Partial<MaintenanceWindow> = {}): MaintenanceWindow => ({ ...base, startsAtMs, endsAtMs, ...over });
/** 02:00–03:00 every night in Berlin */
const nightly: MaintenanceWindow = { ...base, cron: "0 2 * * *", durationMinutes: 60, timeZone: "Europe/Berlin" };

describe("which units a window covers", () => {
  it("host:unit patterns, a unit glob on every host, and host:* for the host's own alerts", () => {
    expect(coversUnit(base, "gpu-a", "vllm-kimi.service")).toBe(true);
    expect(coversUnit(base, "gpu-b", "vllm-kimi.service")).toBe(false);
    expect(coversUnit(base, "gpu-a", "tgi.service")).toBe(false);
    expect(coversUnit(base, "gpu-a", "")).toBe(false);
    expect(coversUnit({ units: ["gpu-b:*"] }, "gpu-b", "")).toBe(true);
    expect(coversUnit({ units: ["gpu-b:*"] }, "gpu-b", "anything.service")).toBe(true);
    expect(coversUnit({ units: ["tgi-*"] }, "gpu-c", "tgi-x.service")).toBe(true);
    expect(coversUnit({ units: ["gpu-?:vllm-a.service"] }, "gpu-c", "vllm-a.service")).toBe(true);
    // a template's instances only when the pattern says so
    expect(coversUnit({ units: ["gpu-a:vllm*"] }, "gpu-a", "vllm@x.service")).toBe(false);
  });
});

describe("one-off windows", () => {
  const w = oneOff(1000 * H, 1002 * H);
  it("hold from startsAt (inclusive) to endsAt (exclusive); then next and past", () => {
    expect(occurrenceAt(w, 1000 * H - 1)).toBeNull();
    expect(occurrenceAt(w, 1000 * H)).toEqual({ startsAtMs: 1000 * H, endsAtMs: 1002 * H });
    expect(occurrenceAt(w, 1002 * H)).toBeNull();
    expect(windowView(w, 999 * H)).toMatchObject({ phase: "next", current: { startsAtMs: 1000 * H } });
    expect(windowView(w, 1001 * H)).toMatchObject({ phase: "now" });
    expect(windowView(w, 1003 * H)).toMatchObject({ phase: "past", current: null });
  });
  it("ended early: holds no more, and counts only until then", () => {
    const ended = { ...w, endedAtMs: 1001 * H };
    expect(occurrenceAt(ended, 1000.5 * H)).toEqual({ startsAtMs: 1000 * H, endsAtMs: 1001 * H });
    expect(occurrenceAt(ended, 1001.5 * H)).toBeNull();
    expect(occurrencesBetween(ended, 0, 2000 * H)).toEqual([{ startsAtMs: 1000 * H, endsAtMs: 1001 * H }]);
  });
  it("maintenanceUntil: the latest end of the windows covering the unit now", () => {
    const other = oneOff(1000 * H, 1005 * H, { units: ["gpu-a:vllm-kimi.service"] });
    expect(maintenanceUntil([w, other], "gpu-a", "vllm-kimi.service", 1001 * H)).toBe(1005 * H);
    expect(maintenanceUntil([w, other], "gpu-a", "vllm-other.service", 1001 * H)).toBe(1002 * H);
    expect(maintenanceUntil([w, other], "gpu-b", "vllm-kimi.service", 1001 * H)).toBeNull();
  });
});

describe("recurring windows in a time zone", () => {
  it("02:00 Berlin is 01:00 UTC in winter and 00:00 UTC in summer (the night of the change included)", () => {
    // CET (UTC+1) before 29 March 2026, CEST (UTC+2) after
    // the night of the change has no 02:00: croner starts it at 03:00 CEST (01:00 UTC)
    expect(nextOccurrence(nightly, Date.parse("2026-03-28T12:00:00Z"))).toEqual({
      startsAtMs: Date.parse("2026-03-29T01:00:00Z"),
      endsAtMs: Date.parse("2026-03-29T02:00:00Z"),
    });
    expect(nextOccurrence(nightly, Date.parse("2026-03-27T12:00:00Z"))!.startsAtMs).toBe(Date.parse("2026-03-28T01:00:00Z"));
    expect(nextOccurrence(nightly, Date.parse("2026-03-29T12:00:00Z"))!.startsAtMs).toBe(Date.parse("2026-03-30T00:00:00Z"));
    // and back in October
    expect(nextOccurrence(nightly, Date.parse("2026-10-24T12:00:00Z"))!.startsAtMs).toBe(Date.parse("2026-10-25T00:00:00Z"));
    expect(nextOccurrence(nightly, Date.parse("2026-10-25T12:00:00Z"))!.startsAtMs).toBe(Date.parse("2026-10-26T01:00:00Z"));
  });

  it("holds for durationMinutes from each start, in the zone's local time", () => {
    expect(occurrenceAt(nightly, Date.parse("2026-01-10T01:30:00Z"))).toEqual({
      startsAtMs: Date.parse("2026-01-10T01:00:00Z"),
      endsAtMs: Date.parse("2026-01-10T02:00:00Z"),
    });
    expect(occurrenceAt(nightly, Date.parse("2026-01-10T00:30:00Z"))).toBeNull();
    expect(occurrenceAt(nightly, Date.parse("2026-07-10T00:30:00Z"))).toMatchObject({ startsAtMs: Date.parse("2026-07-10T00:00:00Z") });
    expect(occurrenceAt(nightly, Date.parse("2026-07-10T01:00:00Z"))).toBeNull();
    expect(windowView(nightly, Date.parse("2026-07-10T00:30:00Z")).phase).toBe("now");
    expect(windowView(nightly, Date.parse("2026-07-10T12:00:00Z"))).toMatchObject({
      phase: "next",
      current: { startsAtMs: Date.parse("2026-07-11T00:00:00Z") },
    });
  });

  it("occurrencesBetween: every night of a week, one hour each, across the March change", () => {
    const list = occurrencesBetween(nightly, Date.parse("2026-03-26T00:00:00Z"), Date.parse("2026-04-02T00:00:00Z"));
    expect(list.map((o) => new Date(o.startsAtMs).toISOString())).toEqual([
      "2026-03-26T01:00:00.000Z",
      "2026-03-27T01:00:00.000Z",
      "2026-03-28T01:00:00.000Z",
      "2026-03-29T01:00:00.000Z", // 02:00 does not exist that night: croner runs it at 03:00 CEST
      "2026-03-30T00:00:00.000Z",
      "2026-03-31T00:00:00.000Z",
      "2026-04-01T00:00:00.000Z",
    ]);
    expect(list.every((o) => o.endsAtMs - o.startsAtMs === H)).toBe(true);
  });

  it("an ended recurring window holds nothing more", () => {
    const ended = { ...nightly, endedAtMs: Date.parse("2026-07-10T00:30:00Z") };
    expect(occurrenceAt(ended, Date.parse("2026-07-10T00:40:00Z"))).toBeNull();
    expect(occurrenceAt(ended, Date.parse("2026-07-11T00:10:00Z"))).toBeNull();
    expect(windowView(ended, Date.parse("2026-07-12T00:00:00Z")).phase).toBe("past");
  });
});

describe("what create takes", () => {
  it("startsAt/endsAt as ISO 8601 with a zone or epoch ms; endsAt after startsAt", () => {
    expect(createMaintenanceInput.parse({ name: "n", units: ["gpu-a:*"], startsAt: "2030-01-01T02:00:00Z", endsAt: 1893470400000 })).toMatchObject({
      startsAt: Date.parse("2030-01-01T02:00:00Z"),
      endsAt: 1893470400000,
    });
    expect(
      createMaintenanceInput.parse({ name: "n", units: ["gpu-a:*"], startsAt: "2030-01-01T02:00:00+01:00", endsAt: "2030-01-01T03:00:00+01:00" }),
    ).toMatchObject({ startsAt: Date.parse("2030-01-01T01:00:00Z") });
    expect(createMaintenanceInput.safeParse({ name: "n", units: ["gpu-a:*"], startsAt: "2030-01-01T02:00:00", endsAt: "2030-01-01T03:00:00Z" }).success).toBe(
      false,
    );
    expect(createMaintenanceInput.safeParse({ name: "n", units: ["gpu-a:*"], startsAt: 2000, endsAt: 1000 }).success).toBe(false);
    expect(createMaintenanceInput.safeParse({ name: "n", units: [], startsAt: 1000, endsAt: 2000 }).success).toBe(false);
    expect(createMaintenanceInput.safeParse({ name: "n", units: ["x"], startsAt: 1000, endsAt: 2000, extra: 1 }).success).toBe(false);
  });
  it("recurring: cron + durationMinutes, timeZone defaulting to UTC", () => {
    expect(createMaintenanceInput.parse({ name: "n", units: ["gpu-a:*"], cron: "0 2 * * 0", durationMinutes: 120 })).toMatchObject({ timeZone: "UTC" });
  });
});

describe("the config file's windows (GPUDECK_MAINTENANCE)", () => {
  it("read-only windows with config ids; bad ones say which and why", () => {
    const list = maintenanceFromEnv(
      JSON.stringify([
        { name: "Sunday reboots", units: ["gpu-a:*"], cron: "0 2 * * 0", durationMinutes: 120, timeZone: "Europe/Berlin" },
        { name: "move", units: ["gpu-b:*"], startsAt: "2030-01-01T00:00:00Z", endsAt: "2030-01-01T04:00:00Z" },
      ]),
    );
    expect(list.map((w) => [w.id, w.source, w.cron, w.startsAtMs])).toEqual([
      ["config-1", "config", "0 2 * * 0", null],
      ["config-2", "config", null, Date.parse("2030-01-01T00:00:00Z")],
    ]);
    expect(maintenanceFromEnv(undefined)).toEqual([]);
    expect(() => maintenanceFromEnv("{")).toThrow(MaintenanceError);
    expect(() => maintenanceFromEnv(JSON.stringify([{ name: "x", units: ["a:*"], cron: "not a cron at all", durationMinutes: 5 }]))).toThrow(
      /GPUDECK_MAINTENANCE\[0\]: cron "not a cron at all" is not a cron expression/,
    );
    expect(() => maintenanceFromEnv(JSON.stringify([{ name: "x", units: ["a:*"], cron: "0 2 * * *", durationMinutes: 5, timeZone: "Mars/Base" }]))).toThrow(
      /not a time zone/,
    );
  });
});

describe("[[panel.maintenance]] in the config file", () => {
  it("TOML date-times and recurring windows become GPUDECK_MAINTENANCE, which the panel reads", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "gpudeck-maint-"));
    try {
      const file = path.join(dir, "gpudeck.toml");
      writeFileSync(
        file,
        [
          "[[panel.maintenance]]",
          'name = "Rack move"',
          'units = ["gpu-c:*"]',
          "startsAt = 2030-01-05T22:00:00Z",
          "endsAt = 2030-01-06T02:00:00Z",
          "",
          "[[panel.maintenance]]",
          'name = "Sundays"',
          'units = ["gpu-a:vllm-*"]',
          'cron = "0 2 * * 0"',
          "durationMinutes = 120",
          'timeZone = "Europe/Berlin"',
          "",
        ].join("\n"),
      );
      const env: Record<string, string | undefined> = {};
      applyConfigFile(env, "panel", file, { hosts: false });
      const windows = maintenanceFromEnv(env.GPUDECK_MAINTENANCE);
      expect(windows.map((w) => [w.name, w.startsAtMs, w.endsAtMs, w.cron, w.timeZone])).toEqual([
        ["Rack move", Date.parse("2030-01-05T22:00:00Z"), Date.parse("2030-01-06T02:00:00Z"), null, null],
        ["Sundays", null, null, "0 2 * * 0", "Europe/Berlin"],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
