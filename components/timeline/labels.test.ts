import { describe, expect, it } from "vitest";
import { layoutSegments, timeScale } from "./layout";
import { clusterLabel, fitGapText, gapLabel, gapSummary, segmentLabel, timelineTitle, windowText } from "./labels";
import type { TimelineSegment } from "./segments";
import { stateStyle } from "./stateStyle";

const NOW = Date.UTC(2025, 0, 12, 12, 0, 0);
const MIN = 60_000;
const HOUR = 60 * MIN;
const tz = "UTC";

function seg(startMs: number, endMs: number, extra: Partial<TimelineSegment> = {}): TimelineSegment {
  return {
    startMs,
    endMs,
    realStartMs: startMs,
    realEndMs: endMs,
    startUsec: startMs * 1000,
    endUsec: endMs * 1000,
    activeState: "active",
    subState: "running",
    result: "success",
    inRestartCycle: false,
    open: false,
    startUnknown: false,
    clippedStart: false,
    clippedEnd: false,
    nRestarts: 0,
    mainPid: 0,
    controlPid: 0,
    ...extra,
  };
}
const running = stateStyle("active", "running");

describe("segmentLabel", () => {
  it("says the state, both ends and how long", () => {
    expect(segmentLabel(seg(NOW - 10 * MIN, NOW - 5 * MIN), running, NOW, tz)).toBe("active (running) from 11:50:00 to 11:55:00, 5 min 00 s");
  });

  it("the current state runs to now, so far", () => {
    expect(segmentLabel(seg(NOW - 90_000, NOW, { open: true, realEndMs: null }), running, NOW, tz)).toBe(
      "active (running) from 11:58:30 to now, so far 1 min 30 s",
    );
  });

  it("a state older than the history has no start and no duration", () => {
    expect(segmentLabel(seg(NOW - HOUR, NOW - 5 * MIN, { realStartMs: null }), running, NOW, tz)).toBe(
      "active (running) from before the recorded history to 11:55:00",
    );
  });

  it("names a result other than success", () => {
    const failed = stateStyle("failed", "failed");
    expect(segmentLabel(seg(NOW - 2 * MIN, NOW - MIN, { activeState: "failed", subState: "failed", result: "exit-code" }), failed, NOW, tz)).toBe(
      "failed from 11:58:00 to 11:59:00, 1 min 00 s, result exit-code",
    );
  });
});

describe("clusterLabel", () => {
  it("counts the states drawn as one box and says how to see them", () => {
    const scale = timeScale(NOW - HOUR, NOW, 800);
    const parts = [
      seg(NOW - 400_000, NOW - 398_000, { activeState: "deactivating", subState: "stop-sigterm" }),
      seg(NOW - 398_000, NOW - 397_000, { activeState: "inactive", subState: "dead" }),
    ];
    const [cluster] = layoutSegments(parts, scale);
    expect(cluster!.kind).toBe("cluster");
    expect(clusterLabel(cluster as Extract<typeof cluster, { kind: "cluster" }>, tz)).toBe(
      "2 state changes from 11:53:20 to 11:53:23: deactivating (stop-sigterm) 1×, inactive (dead) 1×. Zoom in to see them.",
    );
  });
});

describe("spans without an agent", () => {
  it("gapLabel gives the whole span and what it means", () => {
    expect(gapLabel({ fromMs: NOW - 3470_000, toMs: NOW - 3125_000 }, tz)).toBe(
      "Agent not running 11:02:10 – 11:07:55 (5 min 45 s): states rebuilt from systemd's timestamps, substates not observed",
    );
  });

  it("fitGapText picks the longest text that fits", () => {
    expect(fitGapText(200)).toBe("agent not running");
    expect(fitGapText(71)).toBe("no agent");
    expect(fitGapText(20)).toBeNull();
  });

  it("gapSummary counts them, and is empty without any", () => {
    expect(gapSummary(0)).toBe("");
    expect(gapSummary(1)).toBe(" No agent was running during 1 span in view: states rebuilt from systemd's timestamps, substates not observed.");
    expect(gapSummary(3)).toContain("during 3 spans in view");
  });
});

describe("title and window", () => {
  it("names the unit when known", () => {
    expect(timelineTitle("vllm.service")).toBe("State timeline of vllm.service");
    expect(timelineTitle()).toBe("State timeline");
  });

  it("says 'now' while following, the end time otherwise", () => {
    expect(windowText({ fromMs: NOW - HOUR, toMs: NOW }, true, NOW, tz)).toBe("11:00 to now");
    expect(windowText({ fromMs: NOW - 40 * MIN, toMs: NOW - 10 * MIN }, false, NOW, tz)).toBe("11:20 to 11:50");
  });
});
