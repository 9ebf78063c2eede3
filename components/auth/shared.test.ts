import { describe, expect, it } from "vitest";
import { safeNextPath } from "./shared";

describe("safeNextPath", () => {
  it.each([
    ["/units/vllm-a.service", "/units/vllm-a.service"],
    ["/audit?unit=x", "/audit?unit=x"],
    [null, "/"],
    ["", "/"],
    ["https://evil.example/", "/"],
    ["//evil.example/x", "/"],
    ["/\\evil.example", "/"],
    ["javascript:alert(1)", "/"],
    ["/\nx", "/"],
    ["/login?next=/x", "/"],
  ])("%s → %s", (input, want) => {
    expect(safeNextPath(input)).toBe(want);
  });
});
