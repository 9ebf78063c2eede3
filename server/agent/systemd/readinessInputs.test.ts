import { describe, expect, it } from "vitest";
import { environmentValues, parseExecRuns } from "./dbusValues";
import { journalctlArgs } from "./journal";

describe("what the systemd adapter reads for readiness and start requests", () => {
  it("ExecCondition with its last run: a(sasbttttuii), as systemd 252 sent it after a skip", () => {
    // (path, argv, ignore_errors, start_realtime, start_monotonic, exit_realtime, exit_monotonic, pid, code, status)
    const raw = [["/bin/sh", ["/bin/sh", "-c", 'echo "no GPUs here" >&2; exit 1'], false, 1796115273230000n, 9000n, 1796115273235000n, 9005n, 307, 1, 1]];
    expect(parseExecRuns(raw)).toEqual([
      {
        path: "/bin/sh",
        argv: ["/bin/sh", "-c", 'echo "no GPUs here" >&2; exit 1'],
        ignoreErrors: false,
        startUsec: 1796115273230000,
        exitUsec: 1796115273235000,
        pid: 307,
        code: 1,
        status: 1,
      },
    ]);
    expect(parseExecRuns([["/bin/true", ["/bin/true"], false, 0n, 0n, 0n, 0n, 0, 0, 0]])[0]).toMatchObject({ pid: 0, code: 0 });
    expect(parseExecRuns(undefined)).toEqual([]);
    expect(parseExecRuns([["only-a-path"], 42])).toEqual([
      { path: "only-a-path", argv: [], ignoreErrors: false, startUsec: 0, exitUsec: 0, pid: 0, code: 0, status: 0 },
    ]);
  });

  it("only the asked-for keys of Environment= (it may hold tokens)", () => {
    const env = ["HF_TOKEN=hf_secret", "OLLAMA_HOST=0.0.0.0:11500", "PORT=8080", "BROKEN", "=x"];
    expect(environmentValues(env, ["OLLAMA_HOST", "PORT", "LLAMA_ARG_PORT"])).toEqual({ OLLAMA_HOST: "0.0.0.0:11500", PORT: "8080" });
    expect(environmentValues(undefined, ["PORT"])).toEqual({});
  });

  it("one journalctl for several units: one --unit= argument each", () => {
    expect(journalctlArgs({ unit: "a.service", alsoUnits: ["b.service", "c.service"], lines: 0, follow: true })).toEqual([
      "--output=json",
      "--no-pager",
      "--all",
      "--quiet",
      "--lines=0",
      "--follow",
      "--unit=a.service",
      "--unit=b.service",
      "--unit=c.service",
    ]);
  });
});
