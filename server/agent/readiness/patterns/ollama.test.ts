import { afterAll, describe, expect, it } from "vitest";
import { expectAllPatternsCovered, expectNothing, expectOnly } from "./testing";

// Ollama logs in logfmt.
const log = (level: string, source: string, msg: string, rest = "") =>
  `time=2025-05-01T03:12:04.123Z level=${level} source=${source} msg=${msg}${rest ? ` ${rest}` : ""}`;

describe("Ollama log lines", () => {
  afterAll(() => expectAllPatternsCovered("ollama"));

  it("it listens at once (models load on demand)", () => {
    expect(expectOnly("ollama", log("INFO", "routes.go:1297", '"Listening on 127.0.0.1:11434 (version 0.9.2)"'), "ollama-listening").meaning.ready).toBe(true);
    expectOnly("ollama", log("INFO", "routes.go:1235", '"Listening on [::]:11434 (version 0.5.7)"'), "ollama-listening");
  });

  it("a GPU found is fine; library=cpu and no compatible GPUs are a warning, not a failure", () => {
    expectNothing(
      "ollama",
      log(
        "INFO",
        "types.go:130",
        '"inference compute"',
        'id=GPU-5a1c0e7b library=cuda variant=v12 compute=9.0 driver=12.8 name="NVIDIA H200" total="139.8 GiB" available="139.2 GiB"',
      ),
    );
    const cpu = expectOnly(
      "ollama",
      log("INFO", "types.go:130", '"inference compute"', 'id=0 library=cpu variant="" compute="" driver=0.0 name="" total="62.5 GiB" available="58.0 GiB"'),
      "ollama-cpu",
    );
    expect(cpu.meaning).toEqual({ warning: "Ollama found no GPU and runs models on the CPU (inference compute library=cpu)" });
    expect(expectOnly("ollama", log("INFO", "gpu.go:377", '"no compatible GPUs were discovered"'), "ollama-no-gpu").meaning.failure).toBeUndefined();
  });

  it("a model runner's start and its failure", () => {
    expect(expectOnly("ollama", log("INFO", "server.go:619", '"llama runner started in 3.01 seconds"'), "ollama-runner-started").meaning.timing).toEqual({
      stage: "loading a model",
      seconds: 3.01,
    });
    expectOnly(
      "ollama",
      log("ERROR", "sched.go:489", '"error loading llama server"', 'error="llama runner process has terminated: exit status 2"'),
      "ollama-runner-failed",
    );
  });
});
