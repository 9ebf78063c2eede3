/**
 * A simulated unit as the unit page sees it (UnitDetail): its spec's settings, its state, and
 * the processes still alive in the simulated world.
 */
import type { ExecCommand, UnitDetail } from "../../contract/types";
import type { SimUnit } from "./simUnit";
import type { SimProcess, SimWorld } from "./world";

export function simUnitDetail(u: SimUnit, world: SimWorld): UnitDetail {
  const spec = u.spec;
  const info = (p: SimProcess | null) => (p && world.isAlive(p.pid) ? { pid: p.pid, state: p.state, cmdline: p.cmdline, startedAtMs: p.startedAtMs } : null);
  const processes = [u.control, u.main, ...u.workers].map(info).filter((p) => p !== null);
  return {
    ...u.summary,
    fragmentPath: spec.fragmentPath,
    controlGroup: `/system.slice/${spec.name}`,
    execMainCode: u.execMainCode,
    execMainStatus: u.execMainStatus,
    execMainStartUsec: u.execMainStartUsec,
    execMainExitUsec: u.execMainExitUsec,
    execStartPre: spec.execStartPre.map(toExec),
    execStart: [toExec(spec.execStart)],
    execStopPost: spec.execStopPost.map(toExec),
    timeoutStartUsec: spec.timeoutStartMs * 1000,
    timeoutStopUsec: spec.timeoutStopMs * 1000,
    restart: spec.restart,
    restartUsec: spec.restartMs * 1000,
    startLimitBurst: spec.startLimitBurst,
    startLimitIntervalUsec: spec.startLimitIntervalMs * 1000,
    timestamps: { ...u.timestamps },
    controlProcess: info(u.control),
    mainProcess: info(u.main),
    processes,
    requires: [...(spec.requires ?? [])],
  };
}

function toExec(argv: string[]): ExecCommand {
  return { path: argv[0]!, argv, ignoreErrors: false };
}
