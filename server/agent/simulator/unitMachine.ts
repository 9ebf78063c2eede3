/**
 * The simulated systemd's unit state machine, following the sequences measured on systemd 252
 * (see shared notes): start → start-pre → running, stop → stop-sigterm → dead, a main process
 * exiting (Restart=on-failure cycles, the start limit), restart and reset-failed, and each
 * unit's initial condition when the demo starts.
 */
import { newSimEngine, playCrashStages, playServeStart } from "./simEngine";
import { runStartPre } from "./startPre";
import type { SimTiming, SimUnit } from "./simUnit";
import type { SimUnitOps } from "./unitOps";
import type { SimWorld } from "./world";

export class SimUnitMachine {
  private readonly world: SimWorld;
  private readonly timing: SimTiming;

  constructor(private readonly ops: SimUnitOps) {
    this.world = ops.world;
    this.timing = ops.timing;
  }

  initialise(u: SimUnit, now: number): void {
    const ops = this.ops;
    const since = (now - u.spec.initialAgeMs) * 1000;
    const spec = u.spec;
    switch (spec.initially) {
      case "running": {
        this.spawnMain(u, true);
        u.timestamps = { inactiveExitUsec: since - 2_000_000, activeEnterUsec: since, activeExitUsec: 0, inactiveEnterUsec: 0 };
        u.execMainStartUsec = since;
        Object.assign(u.summary, { activeState: "active", subState: "running", stateChangeUsec: since, mainPid: u.main!.pid });
        ops.log(u, `Started ${spec.description}.`);
        break;
      }
      case "failed-pre": {
        u.timestamps = { inactiveExitUsec: since - 1_200_000, activeEnterUsec: 0, activeExitUsec: 0, inactiveEnterUsec: since };
        Object.assign(u.summary, { activeState: "failed", subState: "failed", result: "exit-code", stateChangeUsec: since });
        if (spec.pre?.kind === "fail") {
          // the failure happened before the simulator started: date its lines then
          ops.log(u, `Starting ${spec.description}...`, 6, null, undefined, since - 1_200_000);
          ops.log(u, spec.pre.message, 3, 3321, undefined, since - 5_000);
          ops.log(u, `${spec.name}: Control process exited, code=exited, status=${spec.pre.exitCode}/INVALIDARGUMENT`, 4, null, undefined, since - 2_000);
          ops.log(u, `${spec.name}: Failed with result 'exit-code'.`, 4, null, "failed", since - 1_000);
          ops.log(u, `Failed to start ${spec.description}.`, 3, null, undefined, since);
        }
        break;
      }
      case "crash-looping":
        Object.assign(u.summary, { stateChangeUsec: now * 1000 - 60_000_000 });
        ops.after(u, 1500, () => this.startJob(u, "start"));
        break;
      case "inactive":
        Object.assign(u.summary, { stateChangeUsec: since });
        break;
    }
  }

  startJob(u: SimUnit, type: string): number | null {
    const ops = this.ops;
    const s = u.summary;
    if (s.activeState === "active" || s.activeState === "activating") {
      // systemd merges a start into the running start job, or finishes it at once.
      if (u.job) return u.job.id;
      const id = ops.newJob(u, type);
      ops.finishJob(u, "done");
      return id;
    }
    if (s.activeState === "deactivating") {
      // queued behind the stop
      const id = ops.newJob(u, type);
      u.afterStop = () => this.beginStart(u, false);
      return id;
    }
    const id = ops.newJob(u, type);
    s.nRestarts = 0;
    this.beginStart(u, false);
    return id;
  }

  stopJob(u: SimUnit): number {
    const id = this.ops.newJob(u, "stop");
    this.beginStop(u, () => this.ops.finishJob(u, "done"));
    return id;
  }

  restartJob(u: SimUnit): number {
    const s = u.summary;
    // systemd 252 merges a restart into a start/restart job still running (same job id)
    const merging = u.job !== null && s.activeState === "activating" && (u.job.type === "start" || u.job.type === "restart");
    const id = merging ? u.job!.id : this.ops.newJob(u, "restart");
    if (s.activeState === "inactive" || s.activeState === "failed") {
      s.nRestarts = 0;
      this.beginStart(u, false);
    } else {
      this.beginStop(u, () => {
        s.nRestarts = 0;
        this.beginStart(u, false);
      });
    }
    return id;
  }

  resetFailed(u: SimUnit): void {
    u.starts = [];
    if (u.summary.activeState === "failed") {
      this.ops.setState(u, "inactive", "dead", { result: "success" });
    } else {
      u.summary.result = "success";
      this.ops.emitUnit(u);
    }
  }

  /** The main process ended on its own or by a signal. */
  mainExited(u: SimUnit, code: "exited" | "killed", status: number): void {
    const ops = this.ops;
    const spec = u.spec;
    const main = u.main!;
    this.world.exit(main.pid, this.timing.drainMs / this.timing.speed);
    u.execMainExitUsec = ops.usec();
    u.execMainCode = code === "exited" ? 1 : 2;
    u.execMainStatus = status;
    const result = code === "exited" ? "exit-code" : "signal";
    const statusText = code === "exited" ? `${status}/FAILURE` : `${status}/${status === 9 ? "KILL" : "TERM"}`;
    ops.log(u, `${spec.name}: Main process exited, code=${code}, status=${statusText}`, 5);
    u.main = null;
    const finish = () => {
      const restarting = spec.restart === "on-failure";
      ops.setState(u, "failed", "failed", { result, inRestartCycle: restarting });
      ops.log(u, `${spec.name}: Failed with result '${result}'.`, 4);
      if (u.job) ops.finishJob(u, "failed");
      if (restarting) {
        ops.setState(u, "activating", "auto-restart", { inRestartCycle: true });
        ops.after(u, spec.restartMs, () => {
          if (u.summary.subState !== "auto-restart") return;
          u.summary.nRestarts += 1;
          ops.log(u, `${spec.name}: Scheduled restart job, restart counter is at ${u.summary.nRestarts}.`);
          ops.setState(u, "inactive", "dead", { inRestartCycle: true });
          ops.log(u, `Stopped ${spec.description}.`);
          this.beginStart(u, true);
        });
      }
    };
    if (u.workers.some((w) => this.world.isAlive(w.pid))) {
      // KillMode=control-group: the rest of the cgroup gets SIGTERM before the unit settles
      ops.setState(u, "deactivating", "stop-sigterm", { result });
      ops.after(u, 400, () => {
        for (const w of u.workers) this.world.exit(w.pid, this.timing.drainMs / this.timing.speed);
        u.workers = [];
        finish();
      });
    } else {
      u.workers = [];
      finish();
    }
  }

  /** Start the main process (and its GPU workers). `loaded` = memory already allocated. */
  private spawnMain(u: SimUnit, loaded: boolean): void {
    const spec = u.spec;
    u.main = this.world.spawn(spec.execStart, spec.name, 3);
    u.summary.mainPid = u.main.pid;
    u.engine = newSimEngine(u, loaded, this.ops.now());
    const m = spec.main;
    u.workers = [];
    if (m.kind === "serve") {
      m.gpuIndexes.forEach((gi, rank) => {
        const w = this.world.spawn([m.workerName(rank)], spec.name, m.busyPct);
        this.world.allocate(w.pid, this.world.gpus[gi]!.uuid, m.perGpuMiB, loaded ? 0 : m.loadMs / this.timing.speed);
        u.workers.push(w);
      });
    } else {
      for (const gi of m.gpuIndexes) this.world.allocate(u.main.pid, this.world.gpus[gi]!.uuid, m.perGpuMiB, 1500 / this.timing.speed);
    }
  }

  private beginStart(u: SimUnit, auto: boolean): void {
    const ops = this.ops;
    const spec = u.spec;
    const now = ops.now();
    u.starts = u.starts.filter((t) => now - t < spec.startLimitIntervalMs / this.timing.speed);
    if (u.starts.length >= spec.startLimitBurst) {
      // systemd 252 keeps the last failure's Result here (measured in e2e/systemd: exit-code)
      ops.setState(u, "failed", "failed");
      ops.log(u, `${spec.name}: Start request repeated too quickly.`, 4);
      ops.log(u, `${spec.name}: Failed with result '${u.summary.result}'.`, 4);
      ops.log(u, `Failed to start ${spec.description}.`, 3);
      ops.finishJob(u, "failed");
      return;
    }
    u.starts.push(now);
    if (!auto) ops.log(u, `Starting ${spec.description}...`);
    if (spec.pre) runStartPre(ops, u, spec.pre, () => this.enterMain(u));
    else this.enterMain(u);
  }

  private enterMain(u: SimUnit): void {
    const ops = this.ops;
    const spec = u.spec;
    this.spawnMain(u, false);
    u.execMainStartUsec = ops.usec();
    u.execMainCode = 0;
    u.execMainStatus = 0;
    ops.setState(u, "active", "running", { result: "success" });
    ops.log(u, `Started ${spec.description}.`, 6, null, "done");
    ops.finishJob(u, "done");
    const m = spec.main;
    if (m.kind === "serve") {
      playServeStart(ops, u, m);
    } else {
      const pid = u.main!.pid;
      playCrashStages(ops, u, m.afterMs);
      ops.after(u, 400, () => ops.log(u, m.lines[0]!, 6, pid));
      ops.after(u, m.afterMs, () => {
        if (u.main?.pid !== pid || !this.world.isAlive(pid)) return;
        for (const line of m.lines.slice(1)) ops.log(u, line, 3, pid);
        this.mainExited(u, "exited", m.exitCode);
      });
    }
  }

  private beginStop(u: SimUnit, then: () => void): void {
    const ops = this.ops;
    const spec = u.spec;
    const s = u.summary;
    u.clearTimers();
    if (s.activeState === "inactive" || s.activeState === "failed") {
      then();
      return;
    }
    if (s.subState === "auto-restart") {
      ops.setState(u, "inactive", "dead");
      then();
      return;
    }
    ops.log(u, `Stopping ${spec.description}...`);
    ops.setState(u, "deactivating", "stop-sigterm");
    const wasActive = !!u.main;
    const killedControl = !wasActive && u.control !== null;
    const stopMs = wasActive ? spec.stopMs : 100;
    ops.after(u, stopMs, () => {
      const drain = this.timing.stopDrainMs / this.timing.speed;
      if (u.control) this.world.exit(u.control.pid, 0);
      if (u.main) this.world.exit(u.main.pid, drain);
      for (const w of u.workers) this.world.exit(w.pid, drain);
      u.control = null;
      u.main = null;
      u.workers = [];
      if (wasActive) {
        u.execMainExitUsec = ops.usec();
        u.execMainCode = 1;
        u.execMainStatus = 0;
      }
      if (killedControl) {
        // the ExecStartPre we SIGTERMed counts as a failure (measured on systemd 252)
        ops.log(u, `${spec.name}: Control process exited, code=killed, status=15/TERM`, 5);
        ops.setState(u, "failed", "failed", { result: "signal" });
        ops.log(u, `${spec.name}: Failed with result 'signal'.`, 4);
      } else {
        ops.setState(u, "inactive", "dead", { result: "success" });
        ops.log(u, `${spec.name}: Deactivated successfully.`);
      }
      ops.log(u, `Stopped ${spec.description}.`);
      then();
      const pending = u.afterStop;
      u.afterStop = null;
      pending?.();
    });
  }
}
