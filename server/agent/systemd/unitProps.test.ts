import dbus from "dbus-next";
import { describe, expect, it } from "vitest";
import { unwrapProps } from "./dbusValues";
import { detailFromProps, requiresFromProps, snapshotFromProps, stateReadingFromProps, summaryFromProps } from "./unitProps";

const v = (sig: string, value: unknown) => new dbus.Variant(sig, value);

// A subset of GetAll("") for a service in start-pre, as systemd 252 returned it in the sandbox.
const RAW = {
  Id: v("s", "vllm-kimi.service"),
  Description: v("s", "vLLM Kimi K2.5"),
  LoadState: v("s", "loaded"),
  ActiveState: v("s", "activating"),
  SubState: v("s", "start-pre"),
  UnitFileState: v("s", "enabled"),
  FragmentPath: v("s", "/etc/systemd/system/vllm-kimi.service"),
  StateChangeTimestamp: v("t", 1796017735092351n),
  InactiveExitTimestamp: v("t", 1796017735092351n),
  ActiveEnterTimestamp: v("t", 0n),
  ActiveExitTimestamp: v("t", 0n),
  InactiveEnterTimestamp: v("t", 0n),
  Job: v("(uo)", [23, "/org/freedesktop/systemd1/job/23"]),
  StartLimitBurst: v("u", 5),
  StartLimitIntervalUSec: v("t", 10_000_000n),
  Result: v("s", "success"),
  MainPID: v("u", 0),
  ControlPID: v("u", 311),
  NRestarts: v("u", 0),
  ExecMainCode: v("i", 0),
  ExecMainStatus: v("i", 0),
  ExecMainStartTimestamp: v("t", 0n),
  ExecMainExitTimestamp: v("t", 0n),
  ExecStartPre: v("a(sasbttttuii)", [["/bin/sleep", ["/bin/sleep", "1"], false, 0n, 0n, 0n, 0n, 311, 0, 0]]),
  ExecStart: v("a(sasbttttuii)", [["/bin/sleep", ["/bin/sleep", "1000"], false, 0n, 0n, 0n, 0n, 0, 0, 0]]),
  ExecStopPost: v("a(sasbttttuii)", []),
  TimeoutStartUSec: v("t", 0xffff_ffff_ffff_ffffn),
  TimeoutStopUSec: v("t", 90_000_000n),
  Restart: v("s", "on-failure"),
  RestartUSec: v("t", 100_000n),
  RestartPreventExitStatus: v("(aiai)", [[], []]),
  RestartForceExitStatus: v("(aiai)", [[], []]),
  ControlGroup: v("s", "/system.slice/vllm-kimi.service"),
  Requires: v("as", ["models.mount", "system.slice", "sysinit.target"]),
  BindsTo: v("as", ["nvidia-persistenced.service", "models.mount"]),
  Requisite: v("as", []),
};

describe("unit properties", () => {
  const props = unwrapProps(RAW);
  const jobType = (id: number) => (id === 23 ? "start" : null);

  it("builds the summary the overview shows", () => {
    expect(summaryFromProps("vllm-kimi.service", props, jobType)).toEqual({
      name: "vllm-kimi.service",
      description: "vLLM Kimi K2.5",
      loadState: "loaded",
      unitFileState: "enabled",
      activeState: "activating",
      subState: "start-pre",
      result: "success",
      mainPid: 0,
      controlPid: 311,
      nRestarts: 0,
      stateChangeUsec: 1796017735092351,
      job: { id: 23, type: "start" },
    });
  });

  it("builds the detail, with infinite start timeout as USEC_INFINITY", () => {
    const control = { pid: 311, state: "sleeping" as const, cmdline: ["/bin/sleep", "1"] };
    const d = detailFromProps("vllm-kimi.service", props, jobType, { controlProcess: control, mainProcess: null, processes: [control] });
    expect(d.execStartPre).toEqual([{ path: "/bin/sleep", argv: ["/bin/sleep", "1"], ignoreErrors: false }]);
    expect(d.timeoutStartUsec).toBe(Number.MAX_SAFE_INTEGER);
    expect(d.timeoutStopUsec).toBe(90_000_000);
    expect(d.timestamps).toEqual({ inactiveExitUsec: 1796017735092351, activeEnterUsec: 0, activeExitUsec: 0, inactiveEnterUsec: 0 });
    expect(d.controlGroup).toBe("/system.slice/vllm-kimi.service");
    expect(d.restart).toBe("on-failure");
    expect(d.startLimitBurst).toBe(5);
    expect(d.controlProcess).toBe(control);
  });

  it("has safe defaults for units that are not services or not found", () => {
    const notFound = unwrapProps({ Id: v("s", "gone.service"), LoadState: v("s", "not-found"), ActiveState: v("s", "inactive"), SubState: v("s", "dead") });
    const s = snapshotFromProps("gone.service", notFound, () => null);
    expect(s).toMatchObject({ restart: "", job: null, mainPid: 0, stateChangeUsec: 0 });
    expect(summaryFromProps("gone.service", notFound, () => null)).toMatchObject({ description: "gone.service", loadState: "not-found", unitFileState: "" });
    // a job whose type we could not learn
    expect(snapshotFromProps("x.service", props, () => null).job).toEqual({ id: 23, type: "unknown" });
  });

  it("requires: Requires= ∪ BindsTo= ∪ Requisite=, first seen first, no duplicates", () => {
    const control = { pid: 311, state: "sleeping" as const, cmdline: ["/bin/sleep", "1"] };
    const d = detailFromProps("vllm-kimi.service", props, jobType, { controlProcess: control, mainProcess: null, processes: [control] });
    expect(d.requires).toEqual(["models.mount", "system.slice", "sysinit.target", "nvidia-persistenced.service"]);
    expect(requiresFromProps(unwrapProps({ Requisite: v("as", ["nfs.mount"]) }))).toEqual(["nfs.mount"]);
    // not a service, not loaded, or an older systemd: none of the three
    expect(requiresFromProps(unwrapProps({ LoadState: v("s", "not-found") }))).toEqual([]);
  });

  it("a state reading keeps only the state; targets have no Result", () => {
    expect(stateReadingFromProps("vllm-kimi.service", props)).toEqual({
      name: "vllm-kimi.service",
      loadState: "loaded",
      activeState: "activating",
      subState: "start-pre",
      result: "success",
    });
    const target = unwrapProps({ LoadState: v("s", "loaded"), ActiveState: v("s", "active"), SubState: v("s", "active") });
    expect(stateReadingFromProps("sysinit.target", target)).toEqual({
      name: "sysinit.target",
      loadState: "loaded",
      activeState: "active",
      subState: "active",
      result: "",
    });
  });
});
