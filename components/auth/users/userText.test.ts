import { describe, expect, it } from "vitest";
import { formatTime, isSameUser, parsePatterns, savedMessage, unitScope } from "./userText";

describe("parsePatterns", () => {
  it.each([
    ["vllm-a-*, vllm-b-*", ["vllm-a-*", "vllm-b-*"]],
    ["vllm-a-*  vllm-b-*\nvllm-c.service", ["vllm-a-*", "vllm-b-*", "vllm-c.service"]],
    [" , vllm-a-*,,", ["vllm-a-*"]],
    ["", []],
    ["   ", []],
  ])("%j → %j", (text, want) => {
    expect(parsePatterns(text)).toEqual(want);
  });
});

describe("unitScope", () => {
  it("admins act on all units and viewers on none, whatever patterns they have", () => {
    expect(unitScope({ role: "admin", unitPatterns: ["x-*"] })).toEqual({ kind: "all", text: "all units" });
    expect(unitScope({ role: "viewer", unitPatterns: ["x-*"] })).toEqual({ kind: "none", text: "none (viewer)" });
  });

  it("warns about an operator without patterns and lists an operator's patterns", () => {
    expect(unitScope({ role: "operator", unitPatterns: [] }).kind).toBe("unset");
    expect(unitScope({ role: "operator", unitPatterns: ["vllm-a-*", "vllm-b-*"] })).toEqual({ kind: "patterns", text: "vllm-a-*, vllm-b-*" });
  });
});

describe("savedMessage", () => {
  it("names an operator's units, or says there are none", () => {
    expect(savedMessage({ name: "vera", role: "operator", unitPatterns: ["vllm-embed-*"] })).toBe("Saved vera: operator for vllm-embed-*.");
    expect(savedMessage({ name: "vera", role: "operator", unitPatterns: [] })).toBe("Saved vera: operator for no units.");
  });

  it("says only the role of others", () => {
    expect(savedMessage({ name: "ada", role: "admin", unitPatterns: ["ignored-*"] })).toBe("Saved ada: admin.");
  });
});

describe("isSameUser / formatTime", () => {
  it("matches names without case", () => {
    expect(isSameUser("Ada", "ada")).toBe(true);
    expect(isSameUser("ada", "adam")).toBe(false);
  });

  it("shows a dash for never", () => {
    expect(formatTime(null)).toBe("—");
    expect(formatTime(0)).not.toBe("—");
  });
});
