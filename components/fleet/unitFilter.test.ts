import { describe, expect, it } from "vitest";
import { hostUnit } from "@/components/live/fixtures";
import { matchesUnitFilter, parseUnitFilter, withFilter } from "./unitFilter";

const NOW = 10_000_000;

describe("parseUnitFilter", () => {
  it("reads text, state and host from the URL", () => {
    expect(parseUnitFilter(new URLSearchParams("q=kimi&state=failed&host=gpu-a"))).toEqual({ q: "kimi", state: "failed", host: "gpu-a" });
  });

  it("falls back to everything for missing or unknown values", () => {
    expect(parseUnitFilter(new URLSearchParams(""))).toEqual({ q: "", state: "all", host: "" });
    expect(parseUnitFilter(new URLSearchParams("state=sideways&host=%20"))).toEqual({ q: "", state: "all", host: "" });
  });

  it("keeps the text as typed (spaces too: the text box shows it back)", () => {
    expect(parseUnitFilter(new URLSearchParams("q=kimi%20")).q).toBe("kimi ");
  });
});

describe("withFilter", () => {
  it("sets a filter and keeps the others; the default drops the key", () => {
    const params = new URLSearchParams("q=kimi&state=failed");
    expect(withFilter(params, "host", "gpu-b").toString()).toBe("q=kimi&state=failed&host=gpu-b");
    expect(withFilter(params, "state", "all").toString()).toBe("q=kimi");
    expect(withFilter(params, "q", "").toString()).toBe("state=failed");
    expect(params.toString()).toBe("q=kimi&state=failed");
  });
});

describe("matchesUnitFilter", () => {
  const kimi = hostUnit("gpu-a", "vllm-kimi-k25.service", "active", "running", { description: "vLLM: Kimi K2.5" });
  const loop = hostUnit("gpu-a", "vllm-qwen-draft.service", "activating", "auto-restart");
  const failed = hostUnit("gpu-b", "vllm-rerank.service", "failed", "failed");

  it("matches text in the name, the description or the host, ignoring case", () => {
    const f = (q: string) => ({ q, state: "all" as const, host: "" });
    expect(matchesUnitFilter(kimi, f("KIMI"), NOW)).toBe(true);
    expect(matchesUnitFilter(kimi, f("k2.5"), NOW)).toBe(true);
    expect(matchesUnitFilter(failed, f("gpu-b"), NOW)).toBe(true);
    expect(matchesUnitFilter(failed, f("kimi"), NOW)).toBe(false);
  });

  it("matches a host exactly", () => {
    expect(matchesUnitFilter(kimi, { q: "", state: "all", host: "gpu-a" }, NOW)).toBe(true);
    expect(matchesUnitFilter(failed, { q: "", state: "all", host: "gpu-a" }, NOW)).toBe(false);
  });

  it("matches states; stuck units are both 'needs attention' and 'starting / stopping'", () => {
    const f = (state: "attention" | "changing" | "failed" | "active") => ({ q: "", state, host: "" });
    expect([kimi, loop, failed].filter((u) => matchesUnitFilter(u, f("attention"), NOW)).map((u) => u.name)).toEqual([loop.name, failed.name]);
    expect([kimi, loop, failed].filter((u) => matchesUnitFilter(u, f("changing"), NOW)).map((u) => u.name)).toEqual([loop.name]);
    expect([kimi, loop, failed].filter((u) => matchesUnitFilter(u, f("failed"), NOW)).map((u) => u.name)).toEqual([failed.name]);
    expect([kimi, loop, failed].filter((u) => matchesUnitFilter(u, f("active"), NOW)).map((u) => u.name)).toEqual([kimi.name]);
  });
});
