import { describe, expect, it } from "vitest";
import { eccText, memoryPoolText, throttleText } from "./gpuHealthText";

describe("throttleText", () => {
  it("names the reasons in words, warns on heat and hardware slowdowns, says when nothing was reported", () => {
    expect(throttleText(["sw_power_cap"])).toEqual({ text: "held down: power cap (software)", tone: "ok" });
    expect(throttleText(["gpu_idle", "hw_thermal_slowdown"])).toEqual({ text: "held down: idle, too hot (hardware thermal slowdown)", tone: "warn" });
    expect(throttleText(["some_new_reason"]).text).toBe("held down: some new reason");
    expect(throttleText([])).toEqual({ text: "not held down", tone: "ok" });
    expect(throttleText(null)).toEqual({ text: "not reported", tone: "unknown" });
    expect(throttleText(undefined).tone).toBe("unknown");
  });
});

describe("eccText", () => {
  it("counts both kinds; uncorrected ones are bad; not reported is never 0", () => {
    expect(eccText(0, 0)).toEqual({ text: "0 corrected · 0 uncorrected since the driver loaded", tone: "ok" });
    expect(eccText(12, 0).tone).toBe("warn");
    expect(eccText(12, 1).tone).toBe("bad");
    expect(eccText(3, null).text).toBe("3 corrected · n/a uncorrected since the driver loaded");
    expect(eccText(null, undefined)).toEqual({ text: "not reported (ECC off or unsupported)", tone: "unknown" });
  });
});

describe("memoryPoolText", () => {
  it("says the GPU shares system memory, with what is in use and available", () => {
    expect(memoryPoolText({ totalMiB: 121_856, availableMiB: 98_304, unified: true })).toBe(
      "Shares system memory (unified memory): 23.0 GiB in use, 96.0 GiB available of 119 GiB",
    );
  });
});
