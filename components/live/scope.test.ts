import { describe, expect, it } from "vitest";
import { scopeForPath, scopeKey } from "./scope";

describe("scopeForPath", () => {
  it("watches the fleet on the overview and the Hosts page", () => {
    expect(scopeForPath("/")).toEqual({ watch: "fleet" });
    expect(scopeForPath("/hosts")).toEqual({ watch: "fleet" });
    expect(scopeForPath("/hosts/")).toEqual({ watch: "fleet" });
  });

  it("watches one host on its page and its GPUs page", () => {
    expect(scopeForPath("/hosts/gpu-a")).toEqual({ watch: "host", host: "gpu-a" });
    expect(scopeForPath("/hosts/gpu-a/gpus")).toEqual({ watch: "host", host: "gpu-a" });
  });

  it("watches one unit on a unit page, with its name decoded", () => {
    expect(scopeForPath("/hosts/gpu-a/units/vllm%40kimi.service")).toEqual({ watch: "unit", host: "gpu-a", name: "vllm@kimi.service" });
    expect(scopeForPath("/hosts/gpu-a/units/vllm-kimi.service")).toEqual({ watch: "unit", host: "gpu-a", name: "vllm-kimi.service" });
  });

  it("watches nothing elsewhere: sign-in, the old links' redirects, admin pages, unknown paths", () => {
    for (const p of [
      "/login",
      "/setup",
      "/units/x.service",
      "/gpus",
      "/audit",
      "/users",
      "/account",
      "/hosts/gpu-a/units",
      "/hosts/gpu-a/other",
      "/hosts/%E0%A4%A",
    ]) {
      expect(scopeForPath(p), p).toBeNull();
    }
  });
});

describe("scopeKey", () => {
  it("is equal for equal scopes and differs between them", () => {
    expect(scopeKey({ watch: "host", host: "a" })).toBe(scopeKey({ watch: "host", host: "a" }));
    const keys = [
      null,
      { watch: "fleet" },
      { watch: "host", host: "a" },
      { watch: "unit", host: "a", name: "b" },
      { watch: "unit", host: "a-b", name: "c" },
    ] as const;
    expect(new Set(keys.map((k) => scopeKey(k))).size).toBe(keys.length);
  });
});
