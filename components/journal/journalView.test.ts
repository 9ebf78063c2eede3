import { describe, expect, it } from "vitest";
import { frozen, isFiltered, liveFilter, momentParams, MOMENT_MS, paramsWithView, resolved, viewFromParams } from "./journalView";

describe("the journal view in the URL", () => {
  it("round-trips every filter and keeps other keys", () => {
    const v = { since: 1_796_000_000_000, until: 1_796_000_600_000, priority: "err" as const, grep: "out of memory", boot: -1, kernelPci: ["0000:3b:00"] };
    const p = paramsWithView(new URLSearchParams("range=6h"), v);
    expect(p.get("range")).toBe("6h");
    expect(viewFromParams(p)).toEqual(v);
  });

  it("a moment is ±2 minutes; a bad value is dropped, not an error", () => {
    const p = momentParams(new URLSearchParams(), 1_796_000_000_000, ["0000:86:00"]);
    expect(viewFromParams(p)).toEqual({ since: 1_796_000_000_000 - MOMENT_MS, until: 1_796_000_000_000 + MOMENT_MS, kernelPci: ["0000:86:00"] });
    expect(viewFromParams(new URLSearchParams("jat=1796000000000"))).toMatchObject({ since: 1_796_000_000_000 - MOMENT_MS });
    expect(viewFromParams(new URLSearchParams("jprio=loud&jq=(a%2B)%2B&jboot=3&jkpci=x;rm&jsince=abc"))).toEqual({});
    expect(isFiltered(viewFromParams(new URLSearchParams("range=1h")))).toBe(false);
  });

  it("a relative range follows now; a copied link freezes it", () => {
    const v = viewFromParams(new URLSearchParams("jlast=1h&jprio=warning"));
    expect(resolved(v, 10_000_000)).toEqual({ since: 10_000_000 - 3600_000 });
    expect(frozen(v, 10_000_000)).toEqual({ since: 10_000_000 - 3600_000, until: 10_000_000, priority: "warning" });
  });

  it("live lines pass the priority and text filters", () => {
    const keep = liveFilter({ priority: "warning", grep: "cuda" });
    expect(keep({ priority: 3, message: "CUDA error" })).toBe(true);
    expect(keep({ priority: 6, message: "CUDA info" })).toBe(false);
    expect(keep({ priority: 3, message: "other" })).toBe(false);
  });
});
