import { describe, expect, it } from "vitest";
import { recordsOf } from "./lines";

describe("journal message → log records", () => {
  it("\\r-separated tqdm updates, \\r\\n endings and glued records come out one by one, ANSI removed", () => {
    const msg = "\u001b[32mINFO\u001b[0m 05-01 03:12:04 [x.py:1] a\r\nLoading 1/9\rLoading 2/9\r\rINFO 05-01 b\n";
    expect(recordsOf(msg).map((r) => r.text)).toEqual(["INFO 05-01 03:12:04 [x.py:1] a", "Loading 1/9", "Loading 2/9", "INFO 05-01 b"]);
  });

  it("worker prefixes go, their rank stays; a parenthesis without pid= is the message's own", () => {
    expect(recordsOf("(VllmWorker rank=2 pid=4130) INFO x")).toEqual([{ text: "INFO x", rank: 2 }]);
    expect(recordsOf("(Worker_TP6 pid=4134) INFO x")).toEqual([{ text: "INFO x", rank: 6 }]);
    expect(recordsOf("(EngineCore_0 pid=4122) INFO x")).toEqual([{ text: "INFO x", rank: null }]);
    expect(recordsOf("(RayWorkerWrapper pid=812, ip=10.0.0.5) INFO x")).toEqual([{ text: "INFO x", rank: null }]);
    expect(recordsOf("(note) something")).toEqual([{ text: "(note) something", rank: null }]);
    expect(recordsOf("[2025-05-01 03:12:04 TP3] Load weight begin.")).toEqual([{ text: "[2025-05-01 03:12:04 TP3] Load weight begin.", rank: 3 }]);
  });

  it("a runaway record is cut", () => {
    expect(recordsOf("x".repeat(10_000))[0]!.text.length).toBe(4000);
  });
});
