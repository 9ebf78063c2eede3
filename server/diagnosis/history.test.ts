import { describe, expect, it } from "vitest";
import {
  autoRestarts,
  failurePointAt,
  findProcessExit,
  isManagerMessage,
  lastDependencyFailure,
  lastFailurePoint,
  lastOutputLines,
  parseProcessExit,
} from "./history";
import { ago, line, systemdLine, transitions, usec } from "./fixtures";

describe("parseProcessExit", () => {
  it.each([
    ["Main process exited, code=exited, status=1/FAILURE", { who: "main", code: "exited", status: 1 }],
    ["vllm.service: Control process exited, code=exited, status=203/EXEC", { who: "control", code: "exited", status: 203 }],
    ["Main process exited, code=killed, status=9/KILL", { who: "main", code: "killed", status: 9 }],
    ["Main process exited, code=dumped, status=11/SEGV", { who: "main", code: "dumped", status: 11 }],
    ["Main process exited, code=killed, status=TERM", { who: "main", code: "killed", status: 15 }],
  ])("%s", (message, expected) => {
    expect(parseProcessExit(line(ago(1), message, { pid: 1 }))).toMatchObject(expected);
  });

  it("ignores other lines", () => {
    expect(parseProcessExit(line(ago(1), "Main process exited normally, I promise"))).toBeNull();
  });

  it("finds the newest exit line of the right kind inside bounds", () => {
    const journal = [
      systemdLine(ago(50), "Control process exited, code=exited, status=2/INVALIDARGUMENT"),
      systemdLine(ago(20), "Main process exited, code=exited, status=1/FAILURE"),
      systemdLine(ago(10), "Control process exited, code=exited, status=1/FAILURE"),
    ];
    expect(findProcessExit(journal, "control", null, null)?.status).toBe(1);
    expect(findProcessExit(journal, "control", null, usec(ago(30)))?.status).toBe(2);
    expect(findProcessExit(journal, "control", usec(ago(40)), usec(ago(30)))).toBeNull();
    expect(findProcessExit(journal, "main", null, null)?.status).toBe(1);
  });
});

describe("journal selection", () => {
  it("separates systemd's own messages from service output", () => {
    expect(isManagerMessage(systemdLine(ago(1), "anything"))).toBe(true);
    expect(isManagerMessage(line(ago(1), "Scheduled restart job, restart counter is at 3.", { pid: null }))).toBe(true);
    expect(isManagerMessage(line(ago(1), "INFO: Uvicorn running on http://0.0.0.0:8000"))).toBe(false);
  });

  it("returns the service's last lines, else any lines", () => {
    const journal = [line(ago(5), "a"), line(ago(4), "b"), systemdLine(ago(3), "Stopped x."), line(ago(2), "c"), line(ago(1), "d")];
    expect(lastOutputLines(journal, 3).map((e) => e.message)).toEqual(["b", "c", "d"]);
    expect(lastOutputLines(journal, 3, usec(ago(3))).map((e) => e.message)).toEqual(["a", "b"]);
    expect(lastOutputLines([systemdLine(ago(1), "Stopped x.")], 3).map((e) => e.message)).toEqual(["Stopped x."]);
  });

  it("finds dependency failures by JOB_RESULT or message", () => {
    expect(lastDependencyFailure([line(ago(1), "x", { jobResult: "dependency" })])).not.toBeNull();
    expect(lastDependencyFailure([systemdLine(ago(1), "Dependency failed for My Service.")])).not.toBeNull();
    expect(lastDependencyFailure([line(ago(1), "fine")])).toBeNull();
  });
});

describe("failure phase from transitions", () => {
  it("walks back over deactivating states to the phase that timed out", () => {
    const t = transitions("inactive/dead", [
      [ago(40), "activating/start-pre"],
      [ago(10), "deactivating/stop-sigterm", { result: "timeout" }],
      [ago(9), "deactivating/final-sigkill", { result: "timeout" }],
      [ago(8), "failed/failed", { result: "timeout" }],
    ]);
    const point = failurePointAt(t, 3);
    expect(point.phase).toEqual({ activeState: "activating", subState: "start-pre" });
    expect(point.teardown).toEqual(["stop-sigterm", "final-sigkill"]);
    expect(point.phaseEnteredUsec).toBe(usec(ago(40)));
  });

  it("phase unknown when the first observation was already failed", () => {
    const t = transitions(null, [[ago(5), "failed/failed", { result: "exit-code" }]]);
    expect(lastFailurePoint(t)?.phase).toBeNull();
  });

  it("skips a failed entered from auto-restart (start limit) to find the real cause", () => {
    const t = transitions("inactive/dead", [
      [ago(20), "active/running"],
      [ago(17), "failed/failed", { result: "exit-code", inRestartCycle: true }],
      [ago(17) + 1, "activating/auto-restart", { inRestartCycle: true }],
      [ago(12), "failed/failed", { result: "start-limit-hit" }],
    ]);
    const point = lastFailurePoint(t);
    expect(point?.failed.result).toBe("exit-code");
    expect(point?.phase).toEqual({ activeState: "active", subState: "running" });
    expect(autoRestarts(t)).toHaveLength(1);
  });
});
