import { describe, expect, it } from "vitest";
import { readiness } from "@/components/live/eventFixtures";
import type { ReadinessTransition } from "@/server/contract/readiness";
import { timeScale } from "./layout";
import { layoutReadiness, readinessClusterLabel, readinessLabel } from "./readinessLayout";
import { buildReadinessSegments, mergeReadiness, summarizeReadiness } from "./readinessSegments";

const NOW = Date.UTC(2025, 0, 12, 12, 0, 0);
const ago = (s: number) => NOW - s * 1000;
type To = ReadinessTransition["to"];
const t = (secAgo: number, to: To, from: To | null = null, extra: Partial<ReadinessTransition> = {}): ReadinessTransition => ({
  unit: "vllm.service",
  atMs: ago(secAgo),
  from,
  to,
  engine: "vllm",
  progress: null,
  reason: null,
  ...extra,
});
const unknown: To = { state: "unknown", stage: null };
const weights: To = { state: "loading", stage: "loading weights" };
const graphs: To = { state: "loading", stage: "capturing CUDA graphs" };
const serving: To = { state: "serving", stage: null };
// a restart: unknown (stopped) → loading weights → CUDA graphs → serving
const restart = [
  t(600, serving, unknown),
  t(130, unknown, serving),
  t(120, weights, unknown, { progress: { done: 0, total: 119 } }),
  t(60, graphs, weights),
  t(50, serving, graphs),
];

describe("buildReadinessSegments", () => {
  it("one segment per state and stage, the first one's start unknown, the last open until now", () => {
    const segs = buildReadinessSegments(restart, ago(3600), NOW, NOW);
    expect(segs.map((s) => `${s.state}:${s.stage ?? "-"}`)).toEqual([
      "unknown:-",
      "serving:-",
      "unknown:-",
      "loading:loading weights",
      "loading:capturing CUDA graphs",
      "serving:-",
    ]);
    expect(segs[0]!.realStartMs).toBeNull();
    expect(segs[3]).toMatchObject({ realStartMs: ago(120), realEndMs: ago(60), progress: { done: 0, total: 119 }, open: false });
    expect(segs.at(-1)).toMatchObject({ open: true, realEndMs: null, endMs: NOW });
  });

  it("clips to the window, and a repeated state and stage extends the segment", () => {
    const segs = buildReadinessSegments([...restart, t(40, serving, serving)], ago(90), NOW, NOW);
    expect(segs.map((s) => s.stage ?? s.state)).toEqual(["loading weights", "capturing CUDA graphs", "serving"]);
    expect(segs[0]).toMatchObject({ startMs: ago(90), clippedStart: true, realStartMs: ago(120) });
  });

  it("the live state joins the history when it is newer; with no history it is the whole lane", () => {
    const live = readiness("not-serving", { sinceMs: ago(10), reason: "connection refused" });
    expect(buildReadinessSegments(restart, ago(90), NOW, NOW, live).map((s) => s.state)).toEqual(["loading", "loading", "serving", "not-serving"]);
    // the live one repeats the last recorded: nothing new
    expect(buildReadinessSegments(restart, ago(90), NOW, NOW, readiness("serving", { sinceMs: ago(50) }))).toHaveLength(3);
    expect(buildReadinessSegments([], ago(90), NOW, NOW, live)).toMatchObject([{ state: "not-serving", reason: "connection refused", open: true }]);
    expect(buildReadinessSegments([], ago(90), NOW, NOW)).toEqual([]);
  });
});

describe("mergeReadiness", () => {
  it("drops the live copy of a recorded change, keeps what is new", () => {
    const live = [t(49, serving), t(5, unknown)];
    expect(mergeReadiness(restart, live).map((x) => `${x.to.state}@${(NOW - x.atMs) / 1000}`)).toEqual([
      "serving@600",
      "unknown@130",
      "loading@120",
      "loading@60",
      "serving@50",
      "unknown@5",
    ]);
  });
});

describe("readiness lane layout and words", () => {
  it("narrow segments become one cluster, wide ones say their stage when it fits", () => {
    // 24 h in 744 px: the last two minutes are under a pixel each
    const day = timeScale(ago(86_400), NOW, 800);
    const boxes = layoutReadiness(buildReadinessSegments(restart, ago(86_400), NOW, NOW), day);
    expect(boxes.map((b) => b.kind)).toEqual(["segment", "segment", "cluster"]);
    const cluster = boxes[2]!;
    expect(cluster.kind === "cluster" && readinessClusterLabel(cluster, "UTC")).toBe(
      "4 readiness changes from 11:57:50 to 12:00:00: loading weights 1×, serving 1×, unknown 1×, capturing CUDA graphs 1×. Zoom in to see them.",
    );
    const scale = timeScale(ago(150), NOW, 800);
    const wide = layoutReadiness(buildReadinessSegments(restart, ago(150), NOW, NOW), scale);
    // 10 s is 50 px here: too narrow for "unknown" or the CUDA-graph stage
    expect(wide.map((b) => b.label)).toEqual(["serving", null, "loading weights", null, "serving"]);
  });

  it("labels say what, from when to when, and for how long", () => {
    const segs = buildReadinessSegments(restart, ago(3600), NOW, NOW);
    expect(readinessLabel(segs[3]!, NOW, "UTC")).toBe("loading weights from 11:58:00 to 11:59:00, 1 min 00 s");
    expect(readinessLabel(segs.at(-1)!, NOW, "UTC")).toBe("serving from 11:59:10 to now, so far 50 s");
    expect(summarizeReadiness(segs, NOW)).toBe(
      "Engine now serving for 50 s. Readiness in view: unknown 2×, serving 2×, loading weights 1×, capturing CUDA graphs 1×.",
    );
  });
});
