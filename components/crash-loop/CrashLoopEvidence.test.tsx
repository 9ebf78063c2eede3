import { describe, expect, it } from "vitest";
import { renderToString } from "react-dom/server";
import type { CrashLoopReport } from "@/server/contract/faults";
import { CrashLoopEvidence } from "./CrashLoopEvidence";

const T = Date.UTC(2025, 0, 12, 12, 0, 0) * 1000;
const report: CrashLoopReport = {
  unit: "vllm-qwen.service",
  marker: { restarts: 6, windowMs: 600_000, rule: "5/10m", firstAtUsec: T, lastAtUsec: T + 50e6, startLimitStops: false },
  restarts: [
    { atUsec: T, result: "exit-code", exit: "status=1/FAILURE" },
    { atUsec: T + 10e6, result: "signal", exit: null },
  ],
  restart: "always",
  restartUsec: 10e6,
  startLimitBurst: 5,
  startLimitIntervalUsec: 10e6,
  lastLogLine: { atUsec: T + 9e6, message: "torch.OutOfMemoryError: CUDA out of memory." },
};

/** the text React renders, without its text-node separators */
const text = (html: string) => html.replace(/<!-- -->/g, "");

describe("CrashLoopEvidence", () => {
  it("shows the loop, why systemd will never stop it, each restart and the last line the service wrote", () => {
    const html = text(renderToString(<CrashLoopEvidence report={report} />));
    expect(html).toContain("It restarted 6 times in 10 min (rule 5/10m).");
    expect(html).toMatch(/start limit \(5 starts in 10 s\) can never end it: with Restart=always every 10 s/);
    expect(html).toContain("status=1/FAILURE");
    expect(html).toContain("not in the journal");
    expect(html).toContain("torch.OutOfMemoryError: CUDA out of memory.");
  });

  it("says so when the unit does not loop", () => {
    expect(text(renderToString(<CrashLoopEvidence report={{ ...report, marker: null }} />))).toContain("It does not restart in a loop right now.");
  });
});
