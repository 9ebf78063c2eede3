import { describe, expect, it } from "vitest";
import { DEFAULT_GPU_FIELDS, fallbackFields } from "./queryFields";

const rejected = (field: string) => `Field "${field}" is not a valid field to query.\n`;

describe("fallbackFields", () => {
  it("asks for an older name of a rejected field where there is one, in its place", () => {
    const next = fallbackFields(DEFAULT_GPU_FIELDS, rejected("clocks_event_reasons.active"));
    expect(next).toMatchObject({ rejected: "clocks_event_reasons.active", older: "clocks_throttle_reasons.active" });
    expect(next!.fields).toHaveLength(DEFAULT_GPU_FIELDS.length);
    expect(next!.fields.indexOf("clocks_throttle_reasons.active")).toBe(DEFAULT_GPU_FIELDS.indexOf("clocks_event_reasons.active"));
  });

  it("drops an optional field that has no older name (matched case-insensitively)", () => {
    const next = fallbackFields(DEFAULT_GPU_FIELDS, rejected("Power.Limit"));
    expect(next).toMatchObject({ rejected: "power.limit", older: undefined });
    expect(next!.fields).toEqual(DEFAULT_GPU_FIELDS.filter((f) => f !== "power.limit"));
  });

  it("gives nothing for a field it needs, one it does not ask for, or output that rejects none", () => {
    expect(fallbackFields(DEFAULT_GPU_FIELDS, rejected("uuid"))).toBeNull();
    expect(fallbackFields(DEFAULT_GPU_FIELDS, rejected("fan.speed"))).toBeNull();
    expect(fallbackFields(DEFAULT_GPU_FIELDS, "NVIDIA-SMI has failed")).toBeNull();
  });
});
