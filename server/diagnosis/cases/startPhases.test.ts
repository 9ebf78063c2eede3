/** A start in progress without GPU contention (cases/startPhases.ts), through diagnose(). */
import { describe, expect, it } from "vitest";
import { diagnose } from "../diagnose";
import { ago, cmd, evidence, facts, GIB, holder, proc, startPreUnit, steadyFacts, steadyGpus } from "../fixtures";

describe("activating/start-pre without GPU contention", () => {
  it("plain ExecStartPre with its command and running time", () => {
    const argv = ["/usr/local/bin/fetch-weights", "--model", "kimi-k2.5"];
    const u = startPreUnit(12, { execStartPre: [cmd(...argv)], controlProcess: proc(5210, argv, { startedAtMs: ago(12) }), processes: [proc(5210, argv)] });
    const d = diagnose(facts({ unit: u }));
    expect(d.code).toBe("start-pre-running");
    expect(d.severity).toBe("info");
    expect(d.headline).toBe("ExecStartPre running for 12 s: `/usr/local/bin/fetch-weights --model kimi-k2.5` — TimeoutStartSec in 1 min 48 s.");
    expect(d.etaMs).toBe(108_000);
  });

  it("memory held but the ExecStartPre does not poll nvidia-smi: not called waiting for GPU", () => {
    const argv = ["/usr/local/bin/fetch-weights"];
    const u = startPreUnit(12, { execStartPre: [cmd(...argv)], controlProcess: proc(5210, argv, { startedAtMs: ago(12) }), processes: [proc(5210, argv)] });
    const f = steadyFacts(u, () => steadyGpus(() => [holder("unit", 9100, 70 * GIB, { unit: "other.service" })]));
    expect(diagnose(f).code).toBe("start-pre-running");
  });

  it("recognises nvidia-smi in a child of the ExecStartPre script", () => {
    const script = ["/bin/bash", "/usr/local/bin/wait-for-gpus.sh"];
    const u = startPreUnit(12, {
      execStartPre: [cmd("/usr/local/bin/wait-for-gpus.sh")],
      controlProcess: proc(5210, script, { startedAtMs: ago(12) }),
      processes: [proc(5210, script), proc(5230, ["nvidia-smi", "--query-gpu=memory.used", "--format=csv"])],
    });
    const f = steadyFacts(u, () => steadyGpus(() => [holder("unit", 9100, 70 * GIB, { unit: "other.service" })]));
    expect(diagnose(f).code).toBe("waiting-gpu-unit");
  });

  it("no GPU data at all: says it cannot tell", () => {
    const d = diagnose(facts({ unit: startPreUnit(40) }));
    expect(d.code).toBe("start-pre-running");
    expect(d.headline).toMatch(
      /^ExecStartPre running for 40 s: `\/bin\/bash -c .*`; it polls nvidia-smi, but gpudeck has no GPU data to tell what it waits for — TimeoutStartSec in 1 min 20 s\.$/,
    );
    expect(evidence(d, "GPU data")?.value).toMatch(/none/);
  });

  it("GPUs free: it should finish shortly", () => {
    const d = diagnose(steadyFacts(startPreUnit(3), () => steadyGpus(() => [])));
    expect(d.code).toBe("start-pre-running");
    expect(d.headline).toContain("GPUs 0–7 hold no memory, so it should finish shortly");
  });

  it("command line unknown (control process gone from /proc): uses the unit's only ExecStartPre", () => {
    const d = diagnose(facts({ unit: startPreUnit(3, { controlProcess: null, processes: [] }) }));
    expect(d.headline).toContain("`/bin/bash -c 'while");
    expect(evidence(d, "ExecStartPre")?.source).toBe("systemd");
  });

  it("timeout passed while still in start-pre: warning", () => {
    const argv = ["/usr/local/bin/fetch-weights"];
    const u = startPreUnit(125, { execStartPre: [cmd(...argv)], controlProcess: proc(5210, argv, { startedAtMs: ago(125) }) });
    const d = diagnose(facts({ unit: u }));
    expect(d.severity).toBe("warning");
    expect(d.headline).toMatch(/TimeoutStartSec already passed 5 s ago\.$/);
    expect(d.etaMs).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------
