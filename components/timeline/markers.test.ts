import { describe, expect, it } from "vitest";
import { jobFailed, markerLabel, markersInView, type ActionMarker } from "./markers";

const NOW = Date.UTC(2025, 0, 12, 12, 0, 0);
const m = (secAgo: number, extra: Partial<ActionMarker> = {}): ActionMarker => ({ atMs: NOW - secAgo * 1000, user: "alice", action: "restart", ...extra });

describe("markersInView", () => {
  it("keeps those inside the window, edges included, oldest first", () => {
    const list = [m(10, { user: "c" }), m(3600, { user: "edge" }), m(3601, { user: "out" }), m(100, { user: "b" }), m(0, { user: "now" })];
    expect(markersInView(list, NOW - 3600_000, NOW).map((x) => x.user)).toEqual(["edge", "b", "c", "now"]);
  });

  it("keeps the given order for equal times", () => {
    expect(markersInView([m(5, { user: "first" }), m(5, { user: "second" })], NOW - 60_000, NOW).map((x) => x.user)).toEqual(["first", "second"]);
  });
});

describe("markerLabel", () => {
  it("says who did what when, and why and how it ended when known", () => {
    expect(markerLabel(m(401, { reason: "GPU memory leak", jobResult: "done" }), "UTC")).toBe(
      "restart by alice at 11:53:19, reason: GPU memory leak, job result: done",
    );
    expect(markerLabel(m(401), "UTC")).toBe("restart by alice at 11:53:19");
  });
});

describe("jobFailed", () => {
  it("is true for systemd's failing job results only", () => {
    for (const r of ["failed", "timeout", "canceled", "dependency"]) expect(jobFailed(m(1, { jobResult: r }))).toBe(true);
    for (const r of ["done", "skipped", undefined]) expect(jobFailed(m(1, { jobResult: r }))).toBe(false);
  });
});
