import { describe, expect, it } from "vitest";
import { parseHistogramBuckets, quantileBetween } from "./histogram";

const TTFT = "vllm:time_to_first_token_seconds";

function text(counts: [string, number][], extra = "") {
  return [
    `# TYPE ${TTFT} histogram`,
    ...counts.map(([le, n]) => `${TTFT}_bucket{engine="0",le="${le}",model_name="m"} ${n}.0`),
    `${TTFT}_count{engine="0",model_name="m"} ${counts.at(-1)![1]}.0`,
    extra,
  ].join("\n");
}

describe("histogram quantiles between two scrapes", () => {
  it("sums label sets, interpolates within the bucket, answers the highest finite bound for the +Inf bucket", () => {
    const a = parseHistogramBuckets(
      text([
        ["0.1", 0],
        ["0.5", 0],
        ["1.0", 0],
        ["+Inf", 0],
      ]),
      [TTFT],
    ).get(TTFT);
    const b = parseHistogramBuckets(
      text(
        [
          ["0.1", 50],
          ["0.5", 90],
          ["1.0", 98],
          ["+Inf", 100],
        ],
        `${TTFT}_bucket{engine="1",le="+Inf",model_name="m"} 0.0`,
      ),
      [TTFT],
    ).get(TTFT);
    expect(b!.get(Infinity)).toBe(100);
    expect(quantileBetween(a, b, 0.5)).toBeCloseTo(0.1);
    expect(quantileBetween(a, b, 0.95)).toBeCloseTo(0.5 + 0.5 * (5 / 8));
    expect(quantileBetween(a, b, 0.999)).toBe(1.0);
  });

  it("no observation between the scrapes, a reset, or no +Inf bucket: null", () => {
    const a = parseHistogramBuckets(
      text([
        ["0.1", 5],
        ["+Inf", 10],
      ]),
      [TTFT],
    ).get(TTFT);
    expect(quantileBetween(a, a, 0.5)).toBeNull();
    const reset = parseHistogramBuckets(
      text([
        ["0.1", 1],
        ["+Inf", 2],
      ]),
      [TTFT],
    ).get(TTFT);
    expect(quantileBetween(a, reset, 0.5)).toBeNull();
    const noInf = parseHistogramBuckets(`${TTFT}_bucket{le="0.1"} 3`, [TTFT]).get(TTFT);
    expect(quantileBetween(new Map(), noInf, 0.5)).toBeNull();
    expect(quantileBetween(undefined, a, 0.5)).toBeNull();
  });
});
