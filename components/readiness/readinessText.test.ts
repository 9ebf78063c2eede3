import { describe, expect, it } from "vitest";
import { readiness } from "@/components/live/eventFixtures";
import { modelsText, readinessText, runningButNotServing } from "./readinessText";

const NOW = 1_000 + 130_000;

describe("readinessText", () => {
  it("loading: the stage, its progress and how long it has loaded", () => {
    const r = readiness("loading", { stage: "loading weights", progress: { done: 37, total: 119 } });
    expect(readinessText(r, NOW)).toEqual({ state: "loading", tone: "busy", text: "loading weights 37/119 · 2 min 10 s" });
    expect(readinessText(readiness("loading"), NOW)!.text).toBe("loading · 2 min 10 s");
    expect(readinessText(readiness("loading", { stage: "capturing CUDA graphs" }), NOW)!.text).toBe("capturing CUDA graphs · 2 min 10 s");
  });

  it("loading with an estimate from the last starts: ready in about N min, and never a passed estimate as if it held", () => {
    const r = readiness("loading", { stage: "loading weights", progress: { done: 37, total: 119 }, estimatedReadyAtMs: NOW + 3 * 60_000 });
    expect(readinessText(r, NOW)!.text).toBe("loading weights 37/119 · 2 min 10 s · ready in about 3 min");
    expect(readinessText({ ...r, estimatedReadyAtMs: NOW - 1000 }, NOW)!.text).toBe("loading weights 37/119 · 2 min 10 s · taking longer than usual");
  });

  it("serving: with the models it serves", () => {
    expect(readinessText(readiness("serving", { models: ["/models/kimi-k2.5"] }), NOW)!.text).toBe("serving /models/kimi-k2.5");
    expect(readinessText(readiness("serving"), NOW)).toEqual({ state: "serving", tone: "ok", text: "serving" });
    expect(readinessText(readiness("serving", { warning: "Ollama found no GPU and runs models on the CPU" }), NOW)).toEqual({
      state: "serving",
      tone: "warn",
      text: "serving · warning: Ollama found no GPU and runs models on the CPU",
    });
  });

  it("not serving and failed: in the probe's or the engine's words", () => {
    expect(readinessText(readiness("not-serving", { reason: "connection refused" }), NOW)).toEqual({
      state: "not-serving",
      tone: "warn",
      text: "not serving: connection refused · 2 min 10 s",
    });
    expect(readinessText(readiness("failed", { reason: "torch.OutOfMemoryError: CUDA out of memory" }), NOW)!.text).toBe(
      "vLLM failed: torch.OutOfMemoryError: CUDA out of memory",
    );
    expect(readinessText(readiness("failed", { engine: null }), NOW)!.text).toBe("engine failed");
    expect(readinessText(readiness("failed", { reason: "x".repeat(300) }), NOW)!.text.length).toBeLessThan(160);
  });

  it("unknown or absent (older agent, stopped unit): nothing, never a guess", () => {
    expect(readinessText(readiness("unknown"), NOW)).toBeNull();
    expect(readinessText(undefined, NOW)).toBeNull();
  });

  it("many models are cut to three", () => {
    expect(modelsText(["a", "b", "c", "d", "e"])).toBe("a, b, c +2 more");
  });

  it("running but not serving: loading or not answering", () => {
    expect(runningButNotServing(readiness("loading"))).toBe(true);
    expect(runningButNotServing(readiness("not-serving"))).toBe(true);
    expect(runningButNotServing(readiness("serving"))).toBe(false);
    expect(runningButNotServing(readiness("failed"))).toBe(false);
    expect(runningButNotServing(undefined)).toBe(false);
  });
});
