/**
 * A simulated systemd that follows the state sequences measured on systemd 252
 * (see shared notes: start-pre → running, stop-sigterm → dead, Restart= cycles, start limit).
 * It implements the same SystemdAdapter interface as the D-Bus adapter.
 */
import { EventEmitter } from "node:events";
import type {
  BackendStatus,
  ExecCommand,
  JournalEntry,
  UnitAction,
  UnitDetail,
  UnitStatePair,
  UnitStateReading,
  UnitSummary,
  UnitTransition,
} from "../../contract/types";
import type { SystemdAdapter, SystemdEvent } from "../adapter";
import { matchesUnitGlobs, unitNameProblem } from "../../contract/unitNames";
import type { SimUnitSpec } from "./units";
import type { SimProcess, SimWorld } from "./world";

export interface SimTiming {
  /** divide every delay by this (tests run the demo faster) */
  speed: number;
  /** how long a killed/stopped process's GPU memory takes to drain */
  drainMs: number;
  stopDrainMs: number;
}

const JOURNAL_KEEP = 2000;

interface Job {
  id: number;
  type: string;
}

class SimUnit {
  summary: UnitSummary;
  execMainCode = 0;
  execMainStatus = 0;
  execMainStartUsec = 0;
  execMainExitUsec = 0;
  timestamps = { inactiveExitUsec: 0, activeEnterUsec: 0, activeExitUsec: 0, inactiveEnterUsec: 0 };
  control: SimProcess | null = null;
  main: SimProcess | null = null;
  workers: SimProcess[] = [];
  job: Job | null = null;
  /** pending follow-up after a stop completes (restart) */
  afterStop: (() => void) | null = null;
  starts: number[] = [];
  timers = new Set<NodeJS.Timeout>();

  constructor(readonly spec: SimUnitSpec) {
    this.summary = {
      name: spec.name,
      description: spec.description,
      loadState: "loaded",
      unitFileState: "enabled",
      activeState: "inactive",
      subState: "dead",
      result: "success",
      mainPid: 0,
      controlPid: 0,
      nRestarts: 0,
      stateChangeUsec: 0,
      job: null,
    };
  }

  clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

export class SimSystemd implements SystemdAdapter {
  private units = new Map<string, SimUnit>();
  private onEvent: (e: SystemdEvent) => void = () => {};
  private nextJobId = 1841;
  private journalLines: JournalEntry[] = [];
  private journalSeq = 0;
  private journalBus = new EventEmitter();
  private statusValue: BackendStatus;
  private closed = false;

  constructor(
    private world: SimWorld,
    specs: SimUnitSpec[],
    private globs: string[],
    private timing: SimTiming,
    private now: () => number = Date.now,
  ) {
    for (const spec of specs) this.units.set(spec.name, new SimUnit(spec));
    this.statusValue = { state: "ok", message: "simulated systemd 252", sinceMs: now() };
    this.journalBus.setMaxListeners(0);
  }

  async start(onEvent: (e: SystemdEvent) => void): Promise<void> {
    this.onEvent = onEvent;
    const now = this.now();
    for (const u of this.units.values()) this.initialise(u, now);
    onEvent({ type: "status", status: this.statusValue });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const u of this.units.values()) u.clearTimers();
    this.journalBus.removeAllListeners();
  }

  status(): BackendStatus {
    return this.statusValue;
  }

  list(): UnitSummary[] {
    return [...this.units.values()].filter((u) => this.visible(u.spec.name)).map((u) => ({ ...u.summary }));
  }

  async get(name: string): Promise<UnitDetail | null> {
    const u = this.units.get(name);
    if (!u || !this.visible(name)) return null;
    const spec = u.spec;
    const info = (p: SimProcess | null) =>
      p && this.world.isAlive(p.pid) ? { pid: p.pid, state: p.state, cmdline: p.cmdline, startedAtMs: p.startedAtMs } : null;
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

  /** Read-only state of any simulated unit, visible or not; others are unknown to this "systemd". */
  async readStates(names: string[]): Promise<UnitStateReading[]> {
    return names
      .filter((name) => unitNameProblem(name) === null)
      .map((name) => {
        const u = this.units.get(name);
        if (!u) return { name, loadState: "not-found", activeState: "inactive", subState: "dead", result: "" };
        const { loadState, activeState, subState, result } = u.summary;
        return { name, loadState, activeState, subState, result };
      });
  }

  async act(name: string, action: UnitAction): Promise<{ jobId: number | null }> {
    const u = this.units.get(name);
    if (!u || !this.visible(name)) throw new Error(`Unit ${name} not found.`);
    switch (action) {
      case "start":
        return { jobId: this.startJob(u, "start") };
      case "stop":
        return { jobId: this.stopJob(u) };
      case "restart":
        return { jobId: this.restartJob(u) };
      case "reset-failed":
        this.resetFailed(u);
        return { jobId: null };
      case "kill":
        if (!u.main || !this.world.isAlive(u.main.pid)) throw new Error(`${name} has no main process to kill.`);
        this.mainExited(u, "killed", 9);
        return { jobId: null };
    }
  }

  async journal(name: string, lines: number): Promise<JournalEntry[]> {
    const mine = this.journalLines.filter((l) => l.unit === name);
    return mine.slice(Math.max(0, mine.length - lines));
  }

  async *followJournal(name: string, signal: AbortSignal, opts: { afterCursor?: string } = {}): AsyncIterable<JournalEntry> {
    const queue: JournalEntry[] = [];
    if (opts.afterCursor) {
      // what a reconnecting client missed (nothing when its line is no longer kept)
      const mine = this.journalLines.filter((l) => l.unit === name);
      const at = mine.findIndex((l) => l.cursor === opts.afterCursor);
      if (at >= 0) queue.push(...mine.slice(at + 1));
    }
    let wake: (() => void) | null = null;
    const onLine = (e: JournalEntry) => {
      if (e.unit !== name) return;
      queue.push(e);
      wake?.();
    };
    const onAbort = () => wake?.();
    this.journalBus.on("line", onLine);
    signal.addEventListener("abort", onAbort);
    try {
      while (!signal.aborted && !this.closed) {
        if (queue.length === 0) await new Promise<void>((r) => (wake = r));
        wake = null;
        while (queue.length > 0) yield queue.shift()!;
      }
    } finally {
      this.journalBus.off("line", onLine);
      signal.removeEventListener("abort", onAbort);
    }
  }

  // ------------------------------------------------------------------------------------

  private visible(name: string): boolean {
    return matchesUnitGlobs(name, this.globs);
  }

  private after(u: SimUnit, ms: number, fn: () => void): void {
    const t = setTimeout(
      () => {
        u.timers.delete(t);
        if (!this.closed) fn();
      },
      Math.max(1, ms / this.timing.speed),
    );
    u.timers.add(t);
  }

  private usec(): number {
    return this.now() * 1000;
  }

  private log(u: SimUnit, message: string, priority = 6, pid: number | null = null, jobResult?: string, atUsec = this.usec()): void {
    const entry: JournalEntry = {
      cursor: `s=5eed;i=${(++this.journalSeq).toString(16)}`,
      atUsec,
      unit: u.spec.name,
      priority,
      pid,
      message,
      ...(jobResult ? { jobResult } : {}),
    };
    this.journalLines.push(entry);
    if (this.journalLines.length > JOURNAL_KEEP) this.journalLines.splice(0, this.journalLines.length - JOURNAL_KEEP);
    this.journalBus.emit("line", entry);
  }

  private emitUnit(u: SimUnit): void {
    if (this.visible(u.spec.name)) this.onEvent({ type: "unit", unit: { ...u.summary } });
  }

  private setState(u: SimUnit, activeState: string, subState: string, opts: { result?: string; inRestartCycle?: boolean } = {}): void {
    const from: UnitStatePair = { activeState: u.summary.activeState, subState: u.summary.subState };
    const at = this.usec();
    const s = u.summary;
    if (opts.result !== undefined) s.result = opts.result;
    // systemd's per-state timestamps
    if (from.activeState === "inactive" || from.activeState === "failed") {
      if (activeState !== "inactive" && activeState !== "failed") u.timestamps.inactiveExitUsec = at;
    }
    if (activeState === "active" && from.activeState !== "active") u.timestamps.activeEnterUsec = at;
    if (from.activeState === "active" && activeState !== "active") u.timestamps.activeExitUsec = at;
    if ((activeState === "inactive" || activeState === "failed") && from.activeState !== "inactive" && from.activeState !== "failed") {
      u.timestamps.inactiveEnterUsec = at;
    }
    s.activeState = activeState;
    s.subState = subState;
    s.stateChangeUsec = at;
    s.mainPid = u.main && this.world.isAlive(u.main.pid) ? u.main.pid : 0;
    s.controlPid = u.control && this.world.isAlive(u.control.pid) ? u.control.pid : 0;
    if (!this.visible(s.name)) return;
    const transition: UnitTransition = {
      unit: s.name,
      atUsec: at,
      from,
      to: { activeState, subState },
      result: s.result,
      mainPid: s.mainPid,
      controlPid: s.controlPid,
      nRestarts: s.nRestarts,
      inRestartCycle: opts.inRestartCycle ?? false,
    };
    this.onEvent({ type: "transition", transition });
    this.emitUnit(u);
  }

  private newJob(u: SimUnit, type: string): number {
    if (u.job) this.finishJob(u, "canceled");
    const job = { id: this.nextJobId++, type };
    u.job = job;
    u.summary.job = { ...job };
    this.onEvent({ type: "job", job: { jobId: job.id, unit: u.spec.name, jobType: type, phase: "queued", atMs: this.now() } });
    this.onEvent({ type: "job", job: { jobId: job.id, unit: u.spec.name, jobType: type, phase: "running", atMs: this.now() } });
    this.emitUnit(u);
    return job.id;
  }

  private finishJob(u: SimUnit, result: string): void {
    const job = u.job;
    if (!job) return;
    u.job = null;
    u.summary.job = null;
    this.onEvent({
      type: "job",
      job: { jobId: job.id, unit: u.spec.name, jobType: job.type, phase: "finished", result, atMs: this.now() },
    });
    this.emitUnit(u);
  }

  private initialise(u: SimUnit, now: number): void {
    const since = (now - u.spec.initialAgeMs) * 1000;
    const spec = u.spec;
    switch (spec.initially) {
      case "running": {
        this.spawnMain(u, true);
        u.timestamps = { inactiveExitUsec: since - 2_000_000, activeEnterUsec: since, activeExitUsec: 0, inactiveEnterUsec: 0 };
        u.execMainStartUsec = since;
        Object.assign(u.summary, { activeState: "active", subState: "running", stateChangeUsec: since, mainPid: u.main!.pid });
        this.log(u, `Started ${spec.description}.`);
        break;
      }
      case "failed-pre": {
        u.timestamps = { inactiveExitUsec: since - 1_200_000, activeEnterUsec: 0, activeExitUsec: 0, inactiveEnterUsec: since };
        Object.assign(u.summary, { activeState: "failed", subState: "failed", result: "exit-code", stateChangeUsec: since });
        if (spec.pre?.kind === "fail") {
          // the failure happened before the simulator started: date its lines then
          this.log(u, `Starting ${spec.description}...`, 6, null, undefined, since - 1_200_000);
          this.log(u, spec.pre.message, 3, 3321, undefined, since - 5_000);
          this.log(u, `${spec.name}: Control process exited, code=exited, status=${spec.pre.exitCode}/INVALIDARGUMENT`, 4, null, undefined, since - 2_000);
          this.log(u, `${spec.name}: Failed with result 'exit-code'.`, 4, null, "failed", since - 1_000);
          this.log(u, `Failed to start ${spec.description}.`, 3, null, undefined, since);
        }
        break;
      }
      case "crash-looping":
        Object.assign(u.summary, { stateChangeUsec: now * 1000 - 60_000_000 });
        this.after(u, 1500, () => this.startJob(u, "start"));
        break;
      case "inactive":
        Object.assign(u.summary, { stateChangeUsec: since });
        break;
    }
  }

  /** Start the main process (and its GPU workers). `loaded` = memory already allocated. */
  private spawnMain(u: SimUnit, loaded: boolean): void {
    const spec = u.spec;
    u.main = this.world.spawn(spec.execStart, spec.name, 3);
    u.summary.mainPid = u.main.pid;
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

  private startJob(u: SimUnit, type: string): number | null {
    const s = u.summary;
    if (s.activeState === "active" || s.activeState === "activating") {
      // systemd merges a start into the running start job, or finishes it at once.
      if (u.job) return u.job.id;
      const id = this.newJob(u, type);
      this.finishJob(u, "done");
      return id;
    }
    if (s.activeState === "deactivating") {
      // queued behind the stop
      const id = this.newJob(u, type);
      u.afterStop = () => this.beginStart(u, false);
      return id;
    }
    const id = this.newJob(u, type);
    s.nRestarts = 0;
    this.beginStart(u, false);
    return id;
  }

  private beginStart(u: SimUnit, auto: boolean): void {
    const spec = u.spec;
    const now = this.now();
    u.starts = u.starts.filter((t) => now - t < spec.startLimitIntervalMs / this.timing.speed);
    if (u.starts.length >= spec.startLimitBurst) {
      // systemd 252 keeps the last failure's Result here (measured in e2e/systemd: exit-code)
      this.setState(u, "failed", "failed");
      this.log(u, `${spec.name}: Start request repeated too quickly.`, 4);
      this.log(u, `${spec.name}: Failed with result '${u.summary.result}'.`, 4);
      this.log(u, `Failed to start ${spec.description}.`, 3);
      this.finishJob(u, "failed");
      return;
    }
    u.starts.push(now);
    if (!auto) this.log(u, `Starting ${spec.description}...`);
    if (spec.pre) {
      u.control = this.world.spawn(spec.execStartPre[0]!, spec.name);
      this.setState(u, "activating", "start-pre", { result: "success" });
      const startedAt = this.now();
      this.after(u, spec.timeoutStartMs, () => {
        if (u.summary.subState !== "start-pre") return;
        this.log(u, `${spec.name}: start-pre operation timed out. Terminating.`, 3);
        this.world.exit(u.control!.pid, 0);
        this.setState(u, "deactivating", "stop-sigterm", { result: "timeout" });
        this.after(u, 150, () => {
          u.control = null;
          this.setState(u, "failed", "failed");
          this.log(u, `${spec.name}: Failed with result 'timeout'.`, 4);
          this.log(u, `Failed to start ${spec.description}.`, 3);
          this.finishJob(u, "failed");
        });
      });
      const pre = spec.pre;
      if (pre.kind === "fail") {
        this.after(u, pre.afterMs, () => {
          if (u.summary.subState !== "start-pre") return;
          this.log(u, pre.message, 3, u.control!.pid);
          this.world.exit(u.control!.pid, 0);
          u.control = null;
          this.log(u, `${spec.name}: Control process exited, code=exited, status=${pre.exitCode}/INVALIDARGUMENT`, 4);
          this.setState(u, "failed", "failed", { result: "exit-code" });
          this.log(u, `${spec.name}: Failed with result 'exit-code'.`, 4, null, "failed");
          this.log(u, `Failed to start ${spec.description}.`, 3);
          this.finishJob(u, "failed");
        });
      } else {
        const poll = () => {
          if (u.summary.subState !== "start-pre" || !u.control) return;
          const busy = this.world.gpus.map((g) => ({ g, used: this.world.usedMiB(g.uuid) })).filter((x) => x.used > pre.maxUsedMiB);
          if (busy.length === 0) {
            this.world.exit(u.control.pid, 0);
            u.control = null;
            this.enterMain(u);
            return;
          }
          if (this.now() - startedAt < 1000 || Math.round((this.now() - startedAt) / pre.pollMs) % 5 === 0) {
            const worst = Math.max(...busy.map((x) => x.used));
            this.log(u, `GPU memory still in use (${busy.length} GPUs above ${pre.maxUsedMiB} MiB, max ${worst} MiB), waiting`, 6, u.control.pid);
          }
          this.after(u, pre.pollMs, poll);
        };
        poll();
      }
    } else {
      this.enterMain(u);
    }
  }

  private enterMain(u: SimUnit): void {
    const spec = u.spec;
    this.spawnMain(u, false);
    u.execMainStartUsec = this.usec();
    u.execMainCode = 0;
    u.execMainStatus = 0;
    this.setState(u, "active", "running", { result: "success" });
    this.log(u, `Started ${spec.description}.`, 6, null, "done");
    this.finishJob(u, "done");
    const m = spec.main;
    if (m.kind === "serve") {
      this.after(u, m.loadMs, () => {
        if (u.summary.subState === "running")
          this.log(u, "INFO: Application startup complete. Uvicorn running on http://0.0.0.0:" + spec.execStart.at(-1), 6, u.main?.pid ?? null);
      });
    } else {
      const pid = u.main!.pid;
      this.after(u, 400, () => this.log(u, m.lines[0]!, 6, pid));
      this.after(u, m.afterMs, () => {
        if (u.main?.pid !== pid || !this.world.isAlive(pid)) return;
        for (const line of m.lines.slice(1)) this.log(u, line, 3, pid);
        this.mainExited(u, "exited", m.exitCode);
      });
    }
  }

  /** The main process ended on its own or by a signal. */
  private mainExited(u: SimUnit, code: "exited" | "killed", status: number): void {
    const spec = u.spec;
    const main = u.main!;
    this.world.exit(main.pid, this.timing.drainMs / this.timing.speed);
    u.execMainExitUsec = this.usec();
    u.execMainCode = code === "exited" ? 1 : 2;
    u.execMainStatus = status;
    const result = code === "exited" ? "exit-code" : "signal";
    const statusText = code === "exited" ? `${status}/FAILURE` : `${status}/${status === 9 ? "KILL" : "TERM"}`;
    this.log(u, `${spec.name}: Main process exited, code=${code}, status=${statusText}`, 5);
    u.main = null;
    const finish = () => {
      const restarting = spec.restart === "on-failure";
      this.setState(u, "failed", "failed", { result, inRestartCycle: restarting });
      this.log(u, `${spec.name}: Failed with result '${result}'.`, 4);
      if (u.job) this.finishJob(u, "failed");
      if (restarting) {
        this.setState(u, "activating", "auto-restart", { inRestartCycle: true });
        this.after(u, spec.restartMs, () => {
          if (u.summary.subState !== "auto-restart") return;
          u.summary.nRestarts += 1;
          this.log(u, `${spec.name}: Scheduled restart job, restart counter is at ${u.summary.nRestarts}.`);
          this.setState(u, "inactive", "dead", { inRestartCycle: true });
          this.log(u, `Stopped ${spec.description}.`);
          this.beginStart(u, true);
        });
      }
    };
    if (u.workers.some((w) => this.world.isAlive(w.pid))) {
      // KillMode=control-group: the rest of the cgroup gets SIGTERM before the unit settles
      this.setState(u, "deactivating", "stop-sigterm", { result });
      this.after(u, 400, () => {
        for (const w of u.workers) this.world.exit(w.pid, this.timing.drainMs / this.timing.speed);
        u.workers = [];
        finish();
      });
    } else {
      u.workers = [];
      finish();
    }
  }

  private stopJob(u: SimUnit): number {
    const id = this.newJob(u, "stop");
    this.beginStop(u, () => this.finishJob(u, "done"));
    return id;
  }

  private restartJob(u: SimUnit): number {
    const s = u.summary;
    // systemd 252 merges a restart into a start/restart job still running (same job id)
    const merging = u.job !== null && s.activeState === "activating" && (u.job.type === "start" || u.job.type === "restart");
    const id = merging ? u.job!.id : this.newJob(u, "restart");
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

  private beginStop(u: SimUnit, then: () => void): void {
    const spec = u.spec;
    const s = u.summary;
    u.clearTimers();
    if (s.activeState === "inactive" || s.activeState === "failed") {
      then();
      return;
    }
    if (s.subState === "auto-restart") {
      this.setState(u, "inactive", "dead");
      then();
      return;
    }
    this.log(u, `Stopping ${spec.description}...`);
    this.setState(u, "deactivating", "stop-sigterm");
    const wasActive = !!u.main;
    const killedControl = !wasActive && u.control !== null;
    const stopMs = wasActive ? spec.stopMs : 100;
    this.after(u, stopMs, () => {
      const drain = this.timing.stopDrainMs / this.timing.speed;
      if (u.control) this.world.exit(u.control.pid, 0);
      if (u.main) this.world.exit(u.main.pid, drain);
      for (const w of u.workers) this.world.exit(w.pid, drain);
      u.control = null;
      u.main = null;
      u.workers = [];
      if (wasActive) {
        u.execMainExitUsec = this.usec();
        u.execMainCode = 1;
        u.execMainStatus = 0;
      }
      if (killedControl) {
        // the ExecStartPre we SIGTERMed counts as a failure (measured on systemd 252)
        this.log(u, `${spec.name}: Control process exited, code=killed, status=15/TERM`, 5);
        this.setState(u, "failed", "failed", { result: "signal" });
        this.log(u, `${spec.name}: Failed with result 'signal'.`, 4);
      } else {
        this.setState(u, "inactive", "dead", { result: "success" });
        this.log(u, `${spec.name}: Deactivated successfully.`);
      }
      this.log(u, `Stopped ${spec.description}.`);
      then();
      const pending = u.afterStop;
      u.afterStop = null;
      pending?.();
    });
  }

  private resetFailed(u: SimUnit): void {
    u.starts = [];
    if (u.summary.activeState === "failed") {
      this.setState(u, "inactive", "dead", { result: "success" });
    } else {
      u.summary.result = "success";
      this.emitUnit(u);
    }
  }
}

function toExec(argv: string[]): ExecCommand {
  return { path: argv[0]!, argv, ignoreErrors: false };
}
