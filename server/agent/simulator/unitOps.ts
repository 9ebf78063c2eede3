/**
 * The primitive operations the simulated systemd's state machine is built from: change a unit's
 * state (with systemd's per-state timestamps and a transition event), queue and finish jobs,
 * write the journal, and schedule a unit's timers (scaled by the demo's speed). Units outside
 * the globs change state like any other but emit nothing.
 */
import type { UnitStatePair, UnitTransition } from "../../contract/types";
import type { SystemdEvent } from "../adapter";
import { matchesUnitGlobs } from "../../contract/unitNames";
import type { SimJournal } from "./simJournal";
import type { SimTiming, SimUnit } from "./simUnit";
import type { SimWorld } from "./world";

export class SimUnitOps {
  onEvent: (e: SystemdEvent) => void = () => {};
  /** once closed, pending timers no longer fire */
  closed = false;
  private nextJobId = 1841;

  constructor(
    readonly world: SimWorld,
    readonly timing: SimTiming,
    private readonly journal: SimJournal,
    private readonly globs: string[],
    readonly now: () => number,
  ) {}

  visible(name: string): boolean {
    return matchesUnitGlobs(name, this.globs);
  }

  /** Run `fn` after `ms` (at speed 1), unless the unit's timers are cleared first. */
  after(u: SimUnit, ms: number, fn: () => void): void {
    const t = setTimeout(
      () => {
        u.timers.delete(t);
        if (!this.closed) fn();
      },
      Math.max(1, ms / this.timing.speed),
    );
    u.timers.add(t);
  }

  usec(): number {
    return this.now() * 1000;
  }

  log(u: SimUnit, message: string, priority = 6, pid: number | null = null, jobResult?: string, atUsec = this.usec()): void {
    this.journal.append(u.spec.name, message, priority, pid, jobResult, atUsec);
  }

  emitUnit(u: SimUnit): void {
    if (this.visible(u.spec.name)) this.onEvent({ type: "unit", unit: { ...u.summary } });
  }

  setState(u: SimUnit, activeState: string, subState: string, opts: { result?: string; inRestartCycle?: boolean } = {}): void {
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

  /** A new job for the unit (a job it still had is canceled); it runs at once. */
  newJob(u: SimUnit, type: string): number {
    if (u.job) this.finishJob(u, "canceled");
    const job = { id: this.nextJobId++, type };
    u.job = job;
    u.summary.job = { ...job };
    this.onEvent({ type: "job", job: { jobId: job.id, unit: u.spec.name, jobType: type, phase: "queued", atMs: this.now() } });
    this.onEvent({ type: "job", job: { jobId: job.id, unit: u.spec.name, jobType: type, phase: "running", atMs: this.now() } });
    this.emitUnit(u);
    return job.id;
  }

  finishJob(u: SimUnit, result: string): void {
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
}
