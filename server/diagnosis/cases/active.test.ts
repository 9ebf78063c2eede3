/** Case 10 (cases/active.ts), through diagnose(). */
import { describe, expect, it } from "vitest";
import { diagnose } from "../diagnose";
import { ago, evidence, facts, GIB, holder, NOW, sample, steadyGpus, transitions, unit } from "../fixtures";

describe("case 10 — healthy", () => {
  it("running, with uptime", () => {
    const d = diagnose(facts());
    expect(d.code).toBe("healthy");
    expect(d.severity).toBe("ok");
    expect(d.headline).toBe("Running normally for 3 h 12 min (since 2025-05-01 00:00:00 UTC).");
    expect(d.nextStep).toBeUndefined();
  });

  it("shows the GPU memory the unit uses", () => {
    const gpus = steadyGpus(() => [holder("unit", 4121, 74 * GIB)]);
    const d = diagnose(facts({ gpuNow: sample(NOW, gpus) }));
    expect(evidence(d, "GPU memory")?.value).toBe("592 GiB on GPUs 0–7");
  });

  it("oneshot with RemainAfterExit", () => {
    const d = diagnose(facts({ unit: unit({ subState: "exited", mainPid: 0, mainProcess: null }) }));
    expect(d.code).toBe("healthy");
    expect(d.headline).toMatch(/^Ran successfully 3 h 12 min ago and stays active/);
  });

  it("old restarts long ago do not make a healthy unit flap", () => {
    const recent = transitions("inactive/dead", [
      [ago(7 * 3600), "activating/auto-restart", { inRestartCycle: true }],
      [ago(7 * 3600 - 1), "activating/auto-restart", { inRestartCycle: true }],
      [ago(3 * 3600 + 12 * 60), "active/running"],
    ]);
    expect(diagnose(facts({ recentTransitions: recent })).code).toBe("healthy");
  });
});

// ---------------------------------------------------------------------------------------
