import { describe, expect, it } from "vitest";
import type { UnitTransition } from "@/server/contract/types";
import { buildSegments, segmentDurationMs, summarizeSegments } from "./segments";
import { STATE_STYLE_KEYS, stateSortRank, stateStyle, stateStyleKey } from "./stateStyle";

const T0 = Date.UTC(2025, 0, 12, 12, 0, 0); // ms
const sec = (s: number) => T0 + s * 1000;
/** transition at T0 + s seconds (+ extra µs) */
function tr(s: number, to: [string, string], from: [string, string] | null, extra: Partial<UnitTransition> = {}): UnitTransition {
  return {
    unit: "vllm.service",
    atUsec: sec(s) * 1000 + (extra.atUsec ?? 0),
    from: from ? { activeState: from[0], subState: from[1] } : null,
    to: { activeState: to[0], subState: to[1] },
    result: "success",
    mainPid: 0,
    controlPid: 0,
    nRestarts: 0,
    inRestartCycle: false,
    ...extra,
    ...(extra.atUsec != null ? { atUsec: sec(s) * 1000 + extra.atUsec } : {}),
  };
}

// The incident: running, killed, failed, auto-restart, start-pre for 34 s, running again.
const incident: UnitTransition[] = [
  tr(0, ["active", "running"], null, { mainPid: 100 }),
  tr(600, ["deactivating", "stop-sigterm"], ["active", "running"]),
  tr(602, ["failed", "failed"], ["deactivating", "stop-sigterm"], { result: "signal", inRestartCycle: true }),
  tr(602, ["activating", "auto-restart"], ["failed", "failed"], { atUsec: 1, result: "signal", inRestartCycle: true }),
  tr(607, ["activating", "start-pre"], ["activating", "auto-restart"], { controlPid: 213509 }),
  tr(641, ["activating", "start"], ["activating", "start-pre"], { mainPid: 200 }),
  tr(700, ["active", "running"], ["activating", "start"], { mainPid: 200 }),
];

describe("buildSegments", () => {
  it("turns transitions into consecutive segments with systemd's µs timestamps", () => {
    const segs = buildSegments(incident, sec(-60), sec(760), sec(760));
    expect(segs.map((s) => `${s.activeState}/${s.subState}`)).toEqual([
      "active/running",
      "deactivating/stop-sigterm",
      "failed/failed",
      "activating/auto-restart",
      "activating/start-pre",
      "activating/start",
      "active/running",
    ]);
    // contiguous, each ends where the next begins
    for (let i = 1; i < segs.length; i++) expect(segs[i]!.startMs).toBe(segs[i - 1]!.endMs);
    const startPre = segs[4]!;
    expect(startPre.startUsec).toBe(sec(607) * 1000);
    expect(startPre.endUsec).toBe(sec(641) * 1000);
    expect(segmentDurationMs(startPre, sec(760))).toBe(34_000);
    expect(startPre.controlPid).toBe(213509);
    // the failed step lasted one microsecond and is kept, flagged as part of a restart cycle
    const failed = segs[2]!;
    expect(failed.endUsec! - failed.startUsec!).toBe(1);
    expect(failed.inRestartCycle).toBe(true);
    expect(failed.result).toBe("signal");
  });

  it("marks the last segment open and ends it at now", () => {
    const segs = buildSegments(incident, sec(-60), sec(800), sec(760));
    const last = segs[segs.length - 1]!;
    expect(last.open).toBe(true);
    expect(last.endMs).toBe(sec(760));
    expect(last.realEndMs).toBeNull();
    expect(last.endUsec).toBeNull();
    expect(segs.filter((s) => s.open)).toHaveLength(1);
  });

  it("never ends the current state before it began when the browser clock lags", () => {
    const segs = buildSegments(incident, sec(690), sec(710), sec(695)); // now is before the last transition
    const last = segs[segs.length - 1]!;
    expect(last.activeState).toBe("active");
    expect(last.endMs).toBeGreaterThanOrEqual(last.startMs);
  });

  it("clips to the window and infers the state at the window start from the last earlier transition", () => {
    const segs = buildSegments(incident, sec(605), sec(650), sec(760));
    expect(segs.map((s) => s.subState)).toEqual(["auto-restart", "start-pre", "start"]);
    expect(segs[0]!.startMs).toBe(sec(605));
    expect(segs[0]!.clippedStart).toBe(true);
    expect(segs[0]!.startUsec).toBe(sec(602) * 1000 + 1);
    expect(segs[2]!.endMs).toBe(sec(650));
    expect(segs[2]!.clippedEnd).toBe(true);
    expect(segs[2]!.realEndMs).toBe(sec(700));
    expect(segs[1]!.clippedStart || segs[1]!.clippedEnd).toBe(false);
  });

  it("shows the state in force when no transition falls inside the window", () => {
    const segs = buildSegments(incident, sec(300), sec(400), sec(760));
    expect(segs).toHaveLength(1);
    expect(segs[0]).toMatchObject({ activeState: "active", subState: "running", startMs: sec(300), endMs: sec(400), open: false });
  });

  it("uses the first transition's `from` for the time before the known history", () => {
    const only = [tr(100, ["activating", "start-pre"], ["inactive", "dead"])];
    const segs = buildSegments(only, sec(0), sec(200), sec(200));
    expect(segs[0]).toMatchObject({ activeState: "inactive", subState: "dead", startUnknown: true, realStartMs: null, startMs: sec(0) });
    expect(segmentDurationMs(segs[0]!, sec(200))).toBeNull();
    expect(segs[1]).toMatchObject({ subState: "start-pre", open: true, startMs: sec(100), endMs: sec(200) });
  });

  it("leaves the time before a first observation empty when `from` is null", () => {
    const segs = buildSegments([tr(100, ["active", "running"], null)], sec(0), sec(200), sec(200));
    expect(segs).toHaveLength(1);
    expect(segs[0]!.startMs).toBe(sec(100));
  });

  it("sorts out-of-order transitions by systemd's timestamp", () => {
    const shuffled = [incident[4]!, incident[0]!, incident[6]!, incident[2]!, incident[1]!, incident[5]!, incident[3]!];
    const a = buildSegments(shuffled, sec(-60), sec(760), sec(760));
    const b = buildSegments(incident, sec(-60), sec(760), sec(760));
    expect(a).toEqual(b);
  });

  it("merges a transition that changes nothing visible into the previous segment", () => {
    const t = [tr(0, ["active", "running"], null, { nRestarts: 1 }), tr(10, ["active", "running"], ["active", "running"], { nRestarts: 2 })];
    const segs = buildSegments(t, sec(0), sec(20), sec(20));
    expect(segs).toHaveLength(1);
    expect(segs[0]!.nRestarts).toBe(2);
    expect(segs[0]!.startMs).toBe(sec(0));
  });

  it("keeps zero-length steps at the window edge and drops segments outside it", () => {
    // stop-sigterm ends exactly at the window start, so it is not in view
    expect(buildSegments(incident, sec(602), sec(602.5), sec(760)).map((s) => s.subState)).toEqual(["failed", "auto-restart"]);
    expect(buildSegments(incident, sec(-100), sec(-50), sec(760))).toEqual([]);
    expect(buildSegments(incident, sec(10), sec(10), sec(760))).toEqual([]);
  });

  it("falls back to the current state when there are no transitions", () => {
    expect(buildSegments([], sec(0), sec(100), sec(100))).toEqual([]);
    const segs = buildSegments([], sec(0), sec(100), sec(100), { activeState: "activating", subState: "start-pre", sinceUsec: sec(70) * 1000 });
    expect(segs).toHaveLength(1);
    expect(segs[0]).toMatchObject({ startMs: sec(70), endMs: sec(100), open: true, subState: "start-pre" });
    const unknownSince = buildSegments([], sec(0), sec(100), sec(100), { activeState: "active", subState: "running", sinceUsec: 0 });
    expect(unknownSince[0]).toMatchObject({ startMs: sec(0), startUnknown: true });
  });
});

describe("summarizeSegments", () => {
  it("says the current state and how long each state lasted in view", () => {
    // the moment before start-pre ended: it is the current state
    const segs = buildSegments(incident.slice(0, 5), sec(600), sec(641), sec(641));
    const text = summarizeSegments(segs, sec(641));
    expect(text).toMatch(/^Now activating \(start-pre\) for 34 s\./);
    expect(text).toContain("activating (start-pre): once, 34 s");
    expect(text).toContain("deactivating (stop-sigterm): once, 2.0 s");
    expect(text).toContain("4 segments");
    expect(summarizeSegments([], 0)).toMatch(/No state history/);
  });
});

describe("stateStyle", () => {
  it("labels states the way systemctl does", () => {
    expect(stateStyle("activating", "start-pre").label).toBe("activating (start-pre)");
    expect(stateStyle("active", "running").label).toBe("active (running)");
    expect(stateStyle("inactive", "dead").label).toBe("inactive (dead)");
    expect(stateStyle("failed", "failed").label).toBe("failed");
    expect(stateStyle("activating", "start-pre").shortLabel).toBe("start-pre");
  });

  it("maps each family the issue names to its own colour", () => {
    const pairs: [string, string, string][] = [
      ["inactive", "dead", "inactive"],
      ["activating", "start-pre", "start-pre"],
      ["activating", "start", "activating"],
      ["active", "running", "running"],
      ["deactivating", "stop-sigterm", "stopping"],
      ["deactivating", "stop-sigkill", "killing"],
      ["failed", "failed", "failed"],
      ["activating", "auto-restart", "auto-restart"],
      ["inactive", "auto-restart-queued", "auto-restart"],
      ["reloading", "reload", "reloading"],
      ["active", "reload-notify", "reloading"],
      ["active", "exited", "active"],
      ["bogus", "x", "unknown"],
    ];
    for (const [a, s, key] of pairs) {
      expect(stateStyleKey(a, s), `${a}/${s}`).toBe(key);
      expect(stateStyle(a, s).colorVar).toBe(`var(--gd-state-${key})`);
    }
  });

  it("gives neighbouring states different patterns so they read without colour", () => {
    const p = (a: string, s: string) => stateStyle(a, s).pattern;
    const lifecycle = [
      p("inactive", "dead"),
      p("activating", "start-pre"),
      p("activating", "start"),
      p("active", "running"),
      p("deactivating", "stop-sigterm"),
      p("failed", "failed"),
      p("activating", "auto-restart"),
      p("reloading", "reload"),
    ];
    expect(new Set(lifecycle).size).toBe(lifecycle.length);
  });

  it("has a CSS variable for every style key", async () => {
    const { readFile } = await import("node:fs/promises");
    const css = await readFile(new URL("./palette.css", import.meta.url), "utf8");
    for (const key of STATE_STYLE_KEYS) {
      expect(css, key).toContain(`--gd-state-${key}:`);
      expect(css, key).toContain(`--gd-state-${key}-fg:`);
      expect(css, key).toContain(`.gd-state-${key}`);
    }
  });

  it("sorts failed first, then states in motion, then active, then inactive", () => {
    const order = [
      ["inactive", "dead"],
      ["active", "running"],
      ["activating", "start-pre"],
      ["failed", "failed"],
      ["deactivating", "stop-sigterm"],
    ].sort((a, b) => stateSortRank(a[0]!, a[1]) - stateSortRank(b[0]!, b[1]));
    expect(order.map((x) => x[0])).toEqual(["failed", "activating", "deactivating", "active", "inactive"]);
  });
});
