import { describe, expect, it } from "vitest";
import type { ReadinessState, ReadinessTransition } from "../../contract/readiness";
import { readyEstimateWords } from "../../contract/readiness";
import { estimateReadyAt, median, pastStarts } from "./estimate";

const S = 1000;
/** A start at `at`: each [stage, seconds after the start] entered in turn, serving after `servingS`. */
function start(at: number, stages: [string, number][], servingS: number | null, end: ReadinessState = "unknown"): ReadinessTransition[] {
  const t = (atMs: number, state: ReadinessState, stage: string | null): ReadinessTransition => ({
    unit: "u.service",
    atMs,
    from: null,
    to: { state, stage },
    engine: "vllm",
    progress: null,
    reason: null,
  });
  const out = stages.map(([stage, s]) => t(at + s * S, "loading", stage));
  out.push(servingS === null ? t(at + 5 * S, end, null) : t(at + servingS * S, "serving", null));
  if (servingS !== null) out.push(t(at + servingS * S + 600 * S, "unknown", null));
  return out;
}

const STAGES = (weights: number, graphs: number): [string, number][] => [
  ["starting", 0],
  ["loading weights", weights],
  ["capturing CUDA graphs", graphs],
];

describe("ready-in estimate", () => {
  it("median of an odd and an even count", () => {
    expect(median([])).toBeNull();
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it("keeps only starts that reached serving, the last five", () => {
    const list = [
      ...start(0, STAGES(10, 100), 200),
      ...start(10_000 * S, STAGES(10, 100), null, "failed"), // did not serve
      ...[1, 2, 3, 4, 5].flatMap((i) => start((20_000 + i * 1000) * S, STAGES(10, 100), 200 + i)),
    ];
    const past = pastStarts(list);
    expect(past).toHaveLength(5);
    expect(past.map((p) => (p.servingMs - p.startMs) / S)).toEqual([201, 202, 203, 204, 205]);
    expect(past[0]!.stages["capturing CUDA graphs"]).toBe(past[0]!.startMs + 100 * S);
  });

  it("stage-aware: from entering the current stage, the median time to serving of the starts that went through it", () => {
    // weights → serving took 190, 150, 290 s; graphs → serving 100, 20, 30 s
    const past = pastStarts([...start(0, STAGES(10, 100), 200), ...start(5000 * S, STAGES(50, 180), 200), ...start(9000 * S, STAGES(10, 270), 300)]);
    const now = 100_000 * S;
    expect(estimateReadyAt({ state: "loading", stage: "loading weights", stageSinceMs: now, sinceMs: now - 30 * S }, past)).toBe(now + 190 * S);
    expect(estimateReadyAt({ state: "loading", stage: "capturing CUDA graphs", stageSinceMs: now, sinceMs: now - 200 * S }, past)).toBe(now + 30 * S);
    // a stage no past start went through: the run's start + the median whole start (200 s)
    expect(estimateReadyAt({ state: "loading", stage: "warming up", stageSinceMs: now, sinceMs: now - 50 * S }, past)).toBe(now + 150 * S);
  });

  it("nothing without history, or when not loading", () => {
    const past = pastStarts(start(0, STAGES(10, 100), 200));
    expect(estimateReadyAt({ state: "loading", stage: "starting", stageSinceMs: 0, sinceMs: 0 }, [])).toBeUndefined();
    expect(estimateReadyAt({ state: "serving", stage: null, stageSinceMs: null, sinceMs: 0 }, past)).toBeUndefined();
    expect(estimateReadyAt({ state: "not-serving", stage: null, stageSinceMs: null, sinceMs: 0 }, past)).toBeUndefined();
  });

  it("in words: ahead of time, and never a passed estimate as if it still held", () => {
    const now = 1_000_000;
    const at = (ms: number) => ({ state: "loading" as const, estimatedReadyAtMs: now + ms });
    expect(readyEstimateWords(at(3 * 60_000 + 10_000), now)).toBe("ready in about 3 min");
    expect(readyEstimateWords(at(20_000), now)).toBe("ready in under a minute");
    expect(readyEstimateWords(at(-1), now)).toBe("taking longer than usual");
    expect(readyEstimateWords({ state: "loading" }, now)).toBeNull();
    expect(readyEstimateWords({ state: "serving", estimatedReadyAtMs: now + 60_000 }, now)).toBeNull();
  });
});
