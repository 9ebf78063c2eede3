import { describe, expect, it } from "vitest";
import { engineMetricRows, modelWithVram, NOT_REPORTED, probeText, timingsText } from "./engineFacts";

describe("engineMetricRows", () => {
  it("gives every metric with its unit, and unknown ones as not reported (never 0)", () => {
    const rows = engineMetricRows({ atMs: 1, requestsRunning: 3, requestsWaiting: null, kvCacheUsage: 0.372, generationTokensPerS: 1234.4, ttftSeconds: 0.42 });
    expect(rows).toEqual([
      ["Requests running", "3"],
      ["Requests waiting", NOT_REPORTED],
      ["KV cache in use", "37 %"],
      ["Generation", "1234 tokens/s"],
      ["Time to first token", "420 ms"],
    ]);
    expect(
      engineMetricRows({ atMs: 1, requestsRunning: 0, requestsWaiting: 0, kvCacheUsage: 0.004, generationTokensPerS: 2.25, ttftSeconds: 1.5 }).map((r) => r[1]),
    ).toEqual(["0", "0", "0.4 %", "2.3 tokens/s", "1.50 s"]);
    expect(engineMetricRows(null)).toEqual([]);
  });
});

describe("probeText", () => {
  it("says what answered and when", () => {
    expect(probeText({ url: "http://127.0.0.1:8000/health", ok: true, status: 200, atMs: 10_000 }, 14_000, "UTC")).toBe("HTTP 200 at 00:00:10 (4.0 s ago)");
    expect(probeText({ url: "u", ok: false, status: null, atMs: 10_000, detail: "connection refused" }, 10_500, "UTC")).toBe(
      "no answer: connection refused at 00:00:10 (500 ms ago)",
    );
    expect(probeText({ url: "u", ok: false, status: 503, atMs: 10_000, detail: "503: Loading model" }, 10_000, "UTC")).toBe(
      "HTTP 503 (not ready): Loading model at 00:00:10 (0 ms ago)",
    );
  });
});

describe("timingsText and modelWithVram", () => {
  it("lists the stages the engine timed, and memory per model where reported", () => {
    expect(
      timingsText([
        { stage: "loading weights", seconds: 24.84 },
        { stage: "torch.compile", seconds: 12 },
      ]),
    ).toBe("loading weights 24 s · torch.compile 12 s");
    expect(timingsText([])).toBeNull();
    expect(modelWithVram("llama3", { llama3: 4096 })).toBe("llama3 (4.0 GiB of GPU memory)");
    expect(modelWithVram("llama3", undefined)).toBe("llama3");
  });
});
