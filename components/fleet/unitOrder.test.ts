import { describe, expect, it } from "vitest";
import { readiness } from "@/components/live/eventFixtures";
import { hostUnit, unit } from "@/components/live/fixtures";
import { needsAttention, sortUnits, STUCK_AFTER_MS, unitGroup } from "./unitOrder";

const NOW = 10_000_000;
const changedAgo = (ms: number) => ({ stateChangeUsec: (NOW - ms) * 1000 });

describe("unitGroup", () => {
  it("failed, then stuck: a Restart= loop, or starting/stopping for too long", () => {
    expect(unitGroup(unit("a", "failed", "failed"), NOW)).toBe("failed");
    expect(unitGroup(unit("a", "activating", "auto-restart", changedAgo(1_000)), NOW)).toBe("stuck");
    expect(unitGroup(unit("a", "activating", "start-pre", changedAgo(STUCK_AFTER_MS + 1)), NOW)).toBe("stuck");
    expect(unitGroup(unit("a", "deactivating", "stop-sigterm", changedAgo(STUCK_AFTER_MS + 1)), NOW)).toBe("stuck");
    expect(unitGroup(unit("a", "activating", "start-pre", changedAgo(30_000)), NOW)).toBe("changing");
    // no timestamp from systemd: not called stuck on a guess
    expect(unitGroup(unit("a", "activating", "start", { stateChangeUsec: 0 }), NOW)).toBe("changing");
    expect(unitGroup(unit("a", "active", "running"), NOW)).toBe("active");
    expect(unitGroup(unit("a", "inactive", "dead"), NOW)).toBe("inactive");
    expect(unitGroup(unit("a", "maintenance", "clean"), NOW)).toBe("inactive");
  });

  it("running but not serving sorts with the starting units; stuck after as long, or at once when the engine failed", () => {
    const running = (r: Parameters<typeof readiness>[0], sinceAgoMs = 30_000) =>
      unit("a", "active", "running", { readiness: readiness(r, { sinceMs: NOW - sinceAgoMs }) });
    expect(unitGroup(running("loading"), NOW)).toBe("changing");
    expect(unitGroup(running("not-serving"), NOW)).toBe("changing");
    expect(unitGroup(running("loading", STUCK_AFTER_MS + 1), NOW)).toBe("stuck");
    expect(unitGroup(running("failed"), NOW)).toBe("stuck");
    expect(unitGroup(running("serving"), NOW)).toBe("active");
    expect(unitGroup(running("unknown"), NOW)).toBe("active");
    const sorted = sortUnits([unit("z-serving", "active", "running"), running("loading"), unit("b-pre", "activating", "start-pre", changedAgo(1_000))], NOW);
    expect(sorted.map((u) => `${u.name}:${u.readiness?.state ?? "-"}`)).toEqual(["a:loading", "b-pre:-", "z-serving:-"]);
  });

  it("needs attention when failed or stuck", () => {
    expect(needsAttention(unit("a", "failed", "failed"), NOW)).toBe(true);
    expect(needsAttention(unit("a", "activating", "auto-restart"), NOW)).toBe(true);
    expect(needsAttention(unit("a", "activating", "start", changedAgo(1_000)), NOW)).toBe(false);
    expect(needsAttention(unit("a", "active", "running"), NOW)).toBe(false);
  });
});

describe("sortUnits", () => {
  it("puts failed and stuck units of every host first, then by host and name", () => {
    const units = [
      hostUnit("gpu-a", "ok-a.service"),
      hostUnit("gpu-c", "svc-01.service", "inactive", "dead"),
      hostUnit("gpu-b", "broken.service", "failed", "failed"),
      hostUnit("gpu-c", "loop.service", "activating", "auto-restart"),
      hostUnit("gpu-a", "starting.service", "activating", "start-pre", changedAgo(5_000)),
      hostUnit("gpu-a", "broken.service", "failed", "failed"),
      hostUnit("gpu-b", "ok-b.service"),
    ];
    expect(sortUnits(units, NOW).map((u) => `${u.host}/${u.name}`)).toEqual([
      "gpu-a/broken.service",
      "gpu-b/broken.service",
      "gpu-c/loop.service",
      "gpu-a/starting.service",
      "gpu-a/ok-a.service",
      "gpu-b/ok-b.service",
      "gpu-c/svc-01.service",
    ]);
  });

  it("sorts one host's units (no host) by group and name, leaving the input alone", () => {
    const units = [unit("b", "inactive", "dead"), unit("a"), unit("c", "failed", "failed")];
    expect(sortUnits(units, NOW).map((u) => u.name)).toEqual(["c", "a", "b"]);
    expect(units.map((u) => u.name)).toEqual(["b", "a", "c"]);
  });
});
