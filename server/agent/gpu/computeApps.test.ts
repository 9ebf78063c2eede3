import { describe, expect, it } from "vitest";
import { appsMaxAgeMs, memoryMoved, spawnComputeApps, type AppsOutcome } from "./computeApps";

describe("memoryMoved (when the sampler asks for compute apps again)", () => {
  const used = (entries: [string, number | null][]) => new Map(entries);

  it("is true before any call, when the GPU set changed, or a GPU's used memory changed", () => {
    expect(memoryMoved(null, used([["GPU-a", 10]]))).toBe(true);
    expect(
      memoryMoved(
        used([["GPU-a", 10]]),
        used([
          ["GPU-a", 10],
          ["GPU-b", 0],
        ]),
      ),
    ).toBe(true);
    expect(memoryMoved(used([["GPU-a", 10]]), used([["GPU-a", 11]]))).toBe(true);
  });

  it("is false when nothing moved, and always true for a GPU that reports no used memory", () => {
    expect(memoryMoved(used([["GPU-a", 10]]), used([["GPU-a", 10]]))).toBe(false);
    expect(memoryMoved(used([["GPU-a", null]]), used([["GPU-a", null]]))).toBe(true);
  });
});

describe("appsMaxAgeMs", () => {
  it("covers a slow call and the refresh period", () => {
    expect(appsMaxAgeMs(1000, 5000, 5000)).toBe(11000);
    expect(appsMaxAgeMs(1000, 100, 1000)).toBe(4000);
  });
});

describe("spawnComputeApps", () => {
  it("a path that cannot be spawned is an outcome with a message, given before it returns", () => {
    const seen: [AppsOutcome, unknown][] = [];
    const child = spawnComputeApps({ path: "", env: undefined, timeoutMs: 1000, startedAt: 42 }, (o, from) => seen.push([o, from]));
    expect(child).toBeNull();
    expect(seen).toHaveLength(1);
    expect(seen[0][0]).toMatchObject({ ok: false, atMs: 42, message: expect.any(String) });
    expect(seen[0][1]).toBeNull();
  });
});
