/**
 * From systemd's unit properties (org.freedesktop.systemd1.Unit plus the type-specific
 * interface, e.g. .Service, already unwrapped into plain values) to our domain types. Pure.
 */
import type { ProcessInfo, UnitDetail, UnitStateReading, UnitSummary } from "../../contract/types";
import { num, parseExecCommands, parseExecRuns, parseExitStatusSet, parseJobRef, str, type ExitStatusSet, type PlainProps } from "./dbusValues";

/** What transition logic needs to know about one unit at one moment. */
export interface UnitSnapshot {
  name: string;
  activeState: string;
  subState: string;
  result: string;
  mainPid: number;
  controlPid: number;
  nRestarts: number;
  /** StateChangeTimestamp, µs since the epoch; 0 = never changed since loaded */
  stateChangeUsec: number;
  inactiveExitUsec: number;
  activeEnterUsec: number;
  activeExitUsec: number;
  inactiveEnterUsec: number;
  /** the job systemd runs for the unit now, if any, and its type when known */
  job: { id: number; type: string } | null;
  /** Restart= policy; "" for units that are not services */
  restart: string;
  execMainCode: number;
  execMainStatus: number;
  restartPreventExitStatus: ExitStatusSet;
  restartForceExitStatus: ExitStatusSet;
}

export function snapshotFromProps(name: string, p: PlainProps, jobType: (id: number) => string | null): UnitSnapshot {
  const jobRef = parseJobRef(p.Job);
  return {
    name,
    activeState: str(p.ActiveState, "inactive"),
    subState: str(p.SubState, "dead"),
    result: str(p.Result),
    mainPid: num(p.MainPID),
    controlPid: num(p.ControlPID),
    nRestarts: num(p.NRestarts),
    stateChangeUsec: num(p.StateChangeTimestamp),
    inactiveExitUsec: num(p.InactiveExitTimestamp),
    activeEnterUsec: num(p.ActiveEnterTimestamp),
    activeExitUsec: num(p.ActiveExitTimestamp),
    inactiveEnterUsec: num(p.InactiveEnterTimestamp),
    job: jobRef ? { id: jobRef.id, type: jobType(jobRef.id) ?? "unknown" } : null,
    restart: str(p.Restart),
    execMainCode: num(p.ExecMainCode),
    execMainStatus: num(p.ExecMainStatus),
    restartPreventExitStatus: parseExitStatusSet(p.RestartPreventExitStatus),
    restartForceExitStatus: parseExitStatusSet(p.RestartForceExitStatus),
  };
}

export function summaryFromProps(name: string, p: PlainProps, jobType: (id: number) => string | null): UnitSummary {
  const s = snapshotFromProps(name, p, jobType);
  return {
    name,
    description: str(p.Description, name),
    loadState: str(p.LoadState, "stub"),
    unitFileState: str(p.UnitFileState),
    activeState: s.activeState,
    subState: s.subState,
    result: s.result,
    mainPid: s.mainPid,
    controlPid: s.controlPid,
    nRestarts: s.nRestarts,
    stateChangeUsec: s.stateChangeUsec,
    job: s.job,
  };
}

export interface ProcessFacts {
  controlProcess: ProcessInfo | null;
  mainProcess: ProcessInfo | null;
  processes: ProcessInfo[];
}

export function detailFromProps(name: string, p: PlainProps, jobType: (id: number) => string | null, procs: ProcessFacts): UnitDetail {
  return {
    ...summaryFromProps(name, p, jobType),
    fragmentPath: str(p.FragmentPath),
    needDaemonReload: p.NeedDaemonReload === true,
    controlGroup: str(p.ControlGroup),
    execMainCode: num(p.ExecMainCode),
    execMainStatus: num(p.ExecMainStatus),
    execMainStartUsec: num(p.ExecMainStartTimestamp),
    execMainExitUsec: num(p.ExecMainExitTimestamp),
    execStartPre: parseExecCommands(p.ExecStartPre),
    execStart: parseExecCommands(p.ExecStart),
    execStopPost: parseExecCommands(p.ExecStopPost),
    timeoutStartUsec: num(p.TimeoutStartUSec),
    timeoutStopUsec: num(p.TimeoutStopUSec),
    restart: str(p.Restart),
    restartUsec: num(p.RestartUSec),
    startLimitBurst: num(p.StartLimitBurst),
    startLimitIntervalUsec: num(p.StartLimitIntervalUSec),
    timestamps: {
      inactiveExitUsec: num(p.InactiveExitTimestamp),
      activeEnterUsec: num(p.ActiveEnterTimestamp),
      activeExitUsec: num(p.ActiveExitTimestamp),
      inactiveEnterUsec: num(p.InactiveEnterTimestamp),
    },
    controlProcess: procs.controlProcess,
    mainProcess: procs.mainProcess,
    processes: procs.processes,
    requires: requiresFromProps(p),
    execCondition: parseExecRuns(p.ExecCondition),
  };
}

/** Requires= ∪ BindsTo= ∪ Requisite= (each `as` on org.freedesktop.systemd1.Unit), first seen first. */
export function requiresFromProps(p: PlainProps): string[] {
  const names = new Set<string>();
  for (const prop of [p.Requires, p.BindsTo, p.Requisite]) {
    if (!Array.isArray(prop)) continue;
    for (const name of prop) if (typeof name === "string" && name !== "") names.add(name);
  }
  return [...names];
}

/** State only; Result is on the type-specific interface, so units without one (targets) read "". */
export function stateReadingFromProps(name: string, p: PlainProps): UnitStateReading {
  return {
    name,
    loadState: str(p.LoadState, "stub"),
    activeState: str(p.ActiveState, "inactive"),
    subState: str(p.SubState, "dead"),
    result: str(p.Result),
  };
}
