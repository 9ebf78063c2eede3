import dbus from "dbus-next";
import { describe, expect, it } from "vitest";
import { USEC_INFINITY, jobIdFromPath, num, parseExecCommands, parseExitStatusSet, parseJobRef, unwrapProps } from "./dbusValues";

describe("D-Bus values", () => {
  it("unwraps a{sv} as dbus-next delivers it", () => {
    const props = unwrapProps({
      ActiveState: new dbus.Variant("s", "activating"),
      MainPID: new dbus.Variant("u", 0),
      StateChangeTimestamp: new dbus.Variant("t", 1796017275273438n),
    });
    expect(props).toEqual({ ActiveState: "activating", MainPID: 0, StateChangeTimestamp: 1796017275273438n });
    expect(unwrapProps(null)).toEqual({});
  });

  it("turns t/u into numbers and USEC_INFINITY into a JSON-safe 'no limit'", () => {
    expect(num(1796017275273438n)).toBe(1796017275273438);
    expect(num(0xffff_ffff_ffff_ffffn)).toBe(USEC_INFINITY);
    expect(JSON.parse(JSON.stringify(num(0xffff_ffff_ffff_ffffn)))).toBe(Number.MAX_SAFE_INTEGER);
    expect(num(42)).toBe(42);
    expect(num("42")).toBe(0);
    expect(num(undefined, -1)).toBe(-1);
  });

  it("parses ExecStartPre/ExecStart (a(sasbttttuii)), keeping argv exactly", () => {
    const raw = [
      ["/bin/sh", ["/bin/sh", "-c", "for i in $(seq 60); do nvidia-smi; done"], true, 1n, 2n, 3n, 4n, 311, 1, 0],
      ["/usr/bin/python3", ["python3", "-m", "vllm.entrypoints.openai.api_server", "--port", "8000"], false, 0n, 0n, 0n, 0n, 0, 0, 0],
      "garbage",
    ];
    expect(parseExecCommands(raw)).toEqual([
      { path: "/bin/sh", argv: ["/bin/sh", "-c", "for i in $(seq 60); do nvidia-smi; done"], ignoreErrors: true },
      { path: "/usr/bin/python3", argv: ["python3", "-m", "vllm.entrypoints.openai.api_server", "--port", "8000"], ignoreErrors: false },
    ]);
    expect(parseExecCommands(undefined)).toEqual([]);
  });

  it("reads job references, job paths and exit status sets", () => {
    expect(parseJobRef([23, "/org/freedesktop/systemd1/job/23"])).toEqual({ id: 23, path: "/org/freedesktop/systemd1/job/23" });
    expect(parseJobRef([0, "/"])).toBeNull();
    expect(jobIdFromPath("/org/freedesktop/systemd1/job/1841")).toBe(1841);
    expect(jobIdFromPath("/org/freedesktop/systemd1/unit/x")).toBeNull();
    expect(parseExitStatusSet([[1, 3], [9]])).toEqual({ statuses: [1, 3], signals: [9] });
    expect(parseExitStatusSet(undefined)).toEqual({ statuses: [], signals: [] });
  });
});
