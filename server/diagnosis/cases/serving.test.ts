import { describe, expect, it } from "vitest";
import { diagnose } from "../diagnose";
import { ago, evidence, facts, transitions, unit, usec } from "../fixtures";
import { failedReadiness, readiness, servingReadiness } from "../readinessFixtures";

describe("running is not serving", () => {
  it("loading: the stage and since when, the durations vLLM reported, no figures of our own", () => {
    const d = diagnose(facts({ readiness: readiness() }));
    expect(d).toMatchObject({ severity: "info", code: "engine-loading" });
    expect(d.headline).toBe(
      "Active for 3 h 12 min but not serving yet: capturing CUDA graphs since 03:10:00 (2 min). So far vLLM reported: loading weights took 84 s, torch.compile took 32 s.",
    );
    expect(evidence(d, "Probe")?.value).toBe("GET http://127.0.0.1:8000/health: connection refused at 03:11:59");
    expect(evidence(d, /^Log /)?.source).toBe("journal");
  });

  it("loading weights with progress; nothing logged yet (vLLM refuses connections while it loads)", () => {
    const shards = diagnose(facts({ readiness: readiness({ stage: "loading weights", progress: { done: 37, total: 119 }, timings: [] }) }));
    expect(shards.headline).toBe("Active for 3 h 12 min but not serving yet: loading weights 37/119 since 03:10:00 (2 min).");
    const early = diagnose(facts({ readiness: readiness({ stage: "starting", timings: [], line: null }) }));
    expect(early.headline).toBe(
      "Active for 3 h 12 min but not serving yet: vLLM has logged no load stage yet; its endpoint: 127.0.0.1:8000/health: connection refused (vLLM listens only once it is ready).",
    );
  });

  it("not serving any more: since when and why", () => {
    const d = diagnose(facts({ readiness: servingReadiness({ state: "not-serving", sinceMs: ago(240), reason: "/health answered 503" }) }));
    expect(d).toMatchObject({ severity: "warning", code: "engine-not-serving", nextStep: { action: { kind: "restart" } } });
    expect(d.headline).toBe("Active for 3 h 12 min but not serving since 2025-05-01 03:08:00 UTC (4 min ago): /health answered 503.");
  });

  it("an engine failure while the unit stays active, in the engine's words, with a next step for its kind", () => {
    const d = diagnose(facts({ readiness: failedReadiness() }));
    expect(d).toMatchObject({ severity: "critical", code: "engine-failed" });
    expect(d.headline).toBe("Active for 3 h 12 min but not serving: CUDA out of memory while allocating the KV cache on GPU 3 (vLLM logged it at 03:11:00).");
    expect(d.nextStep?.text).toMatch(/^Free GPU memory on its GPUs/);
    const cpu = diagnose(
      facts({ readiness: failedReadiness({ engine: "ollama", reason: "Ollama found no GPU and runs models on the CPU (inference compute library=cpu)" }) }),
    );
    expect(cpu.nextStep?.text).toMatch(/NVIDIA driver works/);
  });

  it("names the engine's own words it quotes (journalQuotes), and only when it quotes them", () => {
    const quote = "Model architectures ['Qwen9ForCausalLM'] are not supported for now.";
    const d = diagnose(facts({ readiness: failedReadiness({ reason: `ValueError: ${quote}`, reasonQuote: quote }) }));
    expect(d.headline).toContain(quote);
    expect(d.journalQuotes).toEqual([quote]);
    expect(diagnose(facts({ readiness: failedReadiness() })).journalQuotes).toBeUndefined();
  });

  it("a failed unit whose engine said why: that, then how the process ended", () => {
    const failed = unit({
      activeState: "failed",
      subState: "failed",
      result: "exit-code",
      execMainCode: 1,
      execMainStatus: 1,
      execMainExitUsec: usec(ago(55)),
      stateChangeUsec: usec(ago(55)),
    });
    const d = diagnose(facts({ unit: failed, readiness: failedReadiness() }));
    expect(d.code).toBe("engine-failed");
    expect(d.headline).toMatch(
      /^Failed 55 s ago: CUDA out of memory while allocating the KV cache on GPU 3, as vLLM logged at 03:11:00; then the main process exited with code 1/,
    );
    expect(d.nextStep?.action).toEqual({ kind: "start", unit: failed.name });
  });

  it("serving: healthy, with the models", () => {
    const d = diagnose(facts({ readiness: servingReadiness() }));
    expect(d).toMatchObject({ severity: "ok", code: "healthy" });
    expect(d.headline).toBe("Serving moonshotai/Kimi-K2.5 (vLLM) since 2025-05-01 00:12:00 UTC (3 h ago); active for 3 h 12 min.");
  });

  it("no engine, or readiness unknown: as before (running normally)", () => {
    expect(diagnose(facts({ readiness: readiness({ engine: null }) })).headline).toMatch(/^Running normally/);
    expect(diagnose(facts({ readiness: readiness({ state: "unknown" }) })).headline).toMatch(/^Running normally/);
  });

  it("precedence: flapping over loading; the restart cycle and the start limit over the engine's failure", () => {
    const flapping = transitions("active/running", [
      [ago(60), "activating/auto-restart", { inRestartCycle: true }],
      [ago(40), "active/running"],
      [ago(30), "activating/auto-restart", { inRestartCycle: true }],
      [ago(10), "active/running"],
    ]);
    const running = unit({ timestamps: { ...unit().timestamps, activeEnterUsec: usec(ago(10)) } });
    expect(diagnose(facts({ unit: running, recentTransitions: flapping, readiness: readiness() })).code).toBe("crash-loop");
    const cycling = unit({ activeState: "activating", subState: "auto-restart", restart: "on-failure", nRestarts: 4 });
    expect(diagnose(facts({ unit: cycling, readiness: failedReadiness() })).code).toBe("crash-loop");
    const limit = unit({ activeState: "failed", subState: "failed", result: "start-limit-hit", mainPid: 0, mainProcess: null, processes: [] });
    expect(diagnose(facts({ unit: limit, readiness: failedReadiness() })).code).toBe("start-limit-hit");
  });
});
