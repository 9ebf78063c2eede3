import { describe, expect, it } from "vitest";
import { newApiTokenSecret, patternWithin, tokenNameProblem, tokenRights, API_TOKEN_RE } from "./apiTokens";

describe("API token helpers", () => {
  it("makes gdk_ + 43 base64url characters, different each time", () => {
    const a = newApiTokenSecret();
    expect(a).toMatch(API_TOKEN_RE);
    expect(newApiTokenSecret()).not.toBe(a);
  });

  it("checks names", () => {
    expect(tokenNameProblem("ci deploy-1.x")).toBeNull();
    expect(tokenNameProblem("")).toMatch(/needs a name/);
    expect(tokenNameProblem("-x")).toMatch(/starting with a letter/);
    expect(tokenNameProblem("a(b)")).toMatch(/may only contain/);
  });

  it("says whether a pattern stays within the owner's (soundly)", () => {
    expect(patternWithin("vllm-a-*", ["vllm-*"])).toBe(true);
    expect(patternWithin("vllm-a.service", ["vllm-?.service"])).toBe(true);
    expect(patternWithin("vllm-*", ["vllm-?"])).toBe(false); // ? is one character, * any number
    expect(patternWithin("vllm@*", ["vllm-*"])).toBe(false);
    expect(patternWithin("vllm-*", ["vllm-a-*"])).toBe(false);
    expect(patternWithin("gpu-a:vllm-*", ["vllm-*"])).toBe(true);
    expect(patternWithin("vllm-*", ["gpu-a:vllm-*"])).toBe(false); // every host is more than gpu-a
    expect(patternWithin("gpu-a:vllm-x", ["gpu-*:vllm-*"])).toBe(true);
  });

  it("caps a personal token by its owner's rights now; a service token keeps its own", () => {
    const op = { role: "operator" as const, unitPatterns: ["vllm-*"] };
    expect(tokenRights({ kind: "personal", role: "admin", units: [] }, op)).toEqual({ role: "operator", unitPatterns: ["vllm-*"] });
    expect(tokenRights({ kind: "personal", role: "operator", units: ["vllm-a*", "sglang-*"] }, op)).toEqual({ role: "operator", unitPatterns: ["vllm-a*"] });
    expect(tokenRights({ kind: "personal", role: "operator", units: ["x-*"] }, { role: "viewer", unitPatterns: [] })).toEqual({
      role: "viewer",
      unitPatterns: [],
    });
    expect(tokenRights({ kind: "service", role: "admin", units: [] }, { role: "viewer", unitPatterns: [] })).toEqual({ role: "admin", unitPatterns: [] });
  });
});
