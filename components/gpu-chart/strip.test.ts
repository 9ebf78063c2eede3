import { describe, expect, it } from "vitest";
import { gpu, H200_TOTAL_MIB, holder } from "./fixtures";
import { UNIT_HUES, hashString, miBText, stripModel, unitColor, unitHue } from "./strip";

describe("stripModel", () => {
  it("splits a GPU into units (largest first), exited-process memory and the rest", () => {
    const m = stripModel(
      gpu(
        3,
        [
          holder("unit", "b.service", 10_000, 1),
          holder("unit", "a.service", 60_000, 2),
          holder("unit", "a.service", 5_000, 3),
          holder("exited", "a.service", 3_000, 4),
          holder("outside", null, 1_000, 5),
        ],
        { unattributedMiB: 500 },
      ),
    );
    expect(m.parts.map((p) => [p.kind, p.unit, p.miB])).toEqual([
      ["unit", "a.service", 65_000],
      ["unit", "b.service", 10_000],
      ["exited", null, 3_000],
      ["outside", null, 1_500],
    ]);
    expect(m.parts[0]!.holders.map((h) => h.pid)).toEqual([2, 3]);
    expect(m.parts[2]!.holders[0]).toMatchObject({ pid: 4, unit: "a.service" });
    expect(m.parts[3]!.unattributedMiB).toBe(500);
    expect(m.usedMiB).toBe(79_500);
    expect(m.freeMiB).toBe(H200_TOTAL_MIB - 79_500);
    expect(m.parts[0]!.fraction).toBeCloseTo(65_000 / H200_TOTAL_MIB, 9);
    expect(m.overCommitted).toBe(false);
  });

  it("a holder whose memory nvidia-smi did not report ([N/A]) is never shown as 0", () => {
    const m = stripModel(gpu(0, [{ ...holder("exited", "a.service", 0, 7), usedMiBUnknown: true }, holder("unit", "a.service", 2048, 8)]));
    expect(m.parts.map((p) => [p.kind, miBText(p)])).toEqual([
      ["unit", "2.0 GiB"],
      ["exited", "not reported"],
    ]);
    expect(miBText(m.parts[1]!.holders[0]!)).toBe("not reported");
    expect(miBText({ miB: 1024, unknown: true })).toBe("1.0 GiB + not reported");
  });

  it("says 'not reported' for GB10-style GPUs instead of showing 0", () => {
    const m = stripModel(gpu(0, [holder("unit", "a.service", 4096)], { memoryTotalMiB: null, memoryUsedMiB: null }));
    expect(m.notReported).toBe(true);
    expect(m.totalMiB).toBeNull();
    expect(m.freeMiB).toBeNull();
    expect(m.parts[0]).toMatchObject({ unit: "a.service", miB: 4096, fraction: 0 });
  });

  it("scales parts to fit when holders add up to more than the total", () => {
    const m = stripModel(gpu(0, [holder("unit", "a.service", 100_000), holder("exited", null, 60_000)], { memoryTotalMiB: 143_771 }));
    expect(m.overCommitted).toBe(true);
    expect(m.parts.reduce((a, p) => a + p.fraction, 0)).toBeCloseTo(1, 9);
    expect(m.freeMiB).toBe(0);
  });

  it("leaves out empty parts", () => {
    const m = stripModel(gpu(0, []));
    expect(m.parts).toEqual([]);
    expect(m.freeMiB).toBe(H200_TOTAL_MIB);
  });
});

describe("unit colours", () => {
  it("are stable and spread over the palette", () => {
    expect(hashString("vllm.service")).toBe(hashString("vllm.service"));
    expect(unitHue("vllm-kimi-k25.service")).toBe(unitHue("vllm-kimi-k25.service"));
    const used = new Set(Array.from({ length: 200 }, (_, i) => unitHue(`unit-${i}.service`)));
    expect(used.size).toBe(UNIT_HUES.length);
    expect(unitColor("x.service")).toMatch(/^hsl\(\d+ var\(--gd-unit-s, 62%\) var\(--gd-unit-l, 52%\)\)$/);
  });

  it("stay away from the red of failed and the magenta of exited-process memory", () => {
    for (const h of UNIT_HUES) {
      expect(h > 15 && h < 345, `hue ${h}`).toBe(true);
      expect(h < 280 || h > 330, `hue ${h}`).toBe(true);
    }
  });
});
