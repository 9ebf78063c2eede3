import { describe, expect, it } from "vitest";
import { summarize } from "./stats";

describe("summarize", () => {
  it("takes a run's every delivery: a million latencies do not overflow the stack", () => {
    const xs = Array.from({ length: 1_000_000 }, (_, i) => i % 1000);
    xs[123_456] = 5000;
    expect(summarize(xs)).toEqual({ n: 1_000_000, p50: 500, p95: 950, max: 5000 });
  });

  it("an empty list has no percentiles", () => {
    expect(summarize([])).toEqual({ n: 0, p50: null, p95: null, max: null });
  });
});
