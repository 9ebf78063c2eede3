/**
 * A simulated systemd that follows the state sequences measured on systemd 252
 * (see shared notes: start-pre → running, stop-sigterm → dead, Restart= cycles, start limit).
 * It implements the same SystemdAdapter interface as the D-Bus adapter.
 *
 * The pieces: simUnit.ts (a unit's state), unitOps.ts (state changes, jobs, journal, timers),
 * unitMachine.ts and startPre.ts (the state machine), simJournal.ts, simUnitDetail.ts.
 */
import type { BackendStatus, JournalEntry, UnitAction, UnitDetail, UnitStateReading, UnitSummary } from "../../contract/types";
import type { SystemdAdapter, SystemdEvent } from "../adapter";
import { unitNameProblem } from "../../contract/unitNames";
import { SimJournal } from "./simJournal";
import { searchSimJournal, simUnitFile } from "./simJournalSearch";
import type { UnitFile } from "../../contract/journalSearch";
import type { JournalRead, JournalSearchQuery, SearchOptions } from "../systemd/journalSearch";
import { SimUnit, type SimTiming } from "./simUnit";
import { simUnitDetail } from "./simUnitDetail";
import { SimUnitMachine } from "./unitMachine";
import { SimUnitOps } from "./unitOps";
import type { SimUnitSpec } from "./units";
import type { SimWorld } from "./world";

export type { SimTiming } from "./simUnit";

export class SimSystemd implements SystemdAdapter {
  private units = new Map<string, SimUnit>();
  private readonly unitJournal = new SimJournal();
  private readonly ops: SimUnitOps;
  private readonly machine: SimUnitMachine;
  private statusValue: BackendStatus;

  constructor(
    private world: SimWorld,
    specs: SimUnitSpec[],
    globs: string[],
    timing: SimTiming,
    private now: () => number = Date.now,
  ) {
    for (const spec of specs) this.units.set(spec.name, new SimUnit(spec));
    this.statusValue = { state: "ok", message: "simulated systemd 252", sinceMs: now() };
    this.ops = new SimUnitOps(world, timing, this.unitJournal, globs, now);
    this.machine = new SimUnitMachine(this.ops);
  }

  async start(onEvent: (e: SystemdEvent) => void): Promise<void> {
    this.ops.onEvent = onEvent;
    const now = this.now();
    for (const u of this.units.values()) this.machine.initialise(u, now);
    onEvent({ type: "status", status: this.statusValue });
  }

  async close(): Promise<void> {
    this.ops.closed = true;
    for (const u of this.units.values()) u.clearTimers();
    this.unitJournal.close();
  }

  status(): BackendStatus {
    return this.statusValue;
  }

  list(): UnitSummary[] {
    return [...this.units.values()].filter((u) => this.ops.visible(u.spec.name)).map((u) => ({ ...u.summary }));
  }

  async get(name: string): Promise<UnitDetail | null> {
    const u = this.units.get(name);
    if (!u || !this.ops.visible(name)) return null;
    return { ...simUnitDetail(u, this.world), needDaemonReload: this.staleFiles.has(name) };
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
    if (!u || !this.ops.visible(name)) throw new Error(`Unit ${name} not found.`);
    switch (action) {
      case "start":
        return { jobId: this.machine.startJob(u, "start") };
      case "stop":
        return { jobId: this.machine.stopJob(u) };
      case "restart":
        return { jobId: this.machine.restartJob(u) };
      case "reset-failed":
        this.machine.resetFailed(u);
        return { jobId: null };
      case "kill":
        if (!u.main || !this.world.isAlive(u.main.pid)) throw new Error(`${name} has no main process to kill.`);
        this.machine.mainExited(u, "killed", 9);
        return { jobId: null };
    }
  }

  async journal(name: string, lines: number): Promise<JournalEntry[]> {
    return this.unitJournal.read(name, lines);
  }

  /** the simulated kernel log's recent lines (./index.ts connects it), for searches with kernelPci */
  kernelLines: () => readonly JournalEntry[] = () => [];
  /** units whose "file on disk" a test or the demo changed: NeedDaemonReload */
  readonly staleFiles = new Set<string>();

  async searchJournal(q: JournalSearchQuery, opts: SearchOptions): Promise<JournalRead> {
    return searchSimJournal(this.unitJournal.all(), this.kernelLines(), q, opts);
  }

  async readUnitFile(name: string): Promise<UnitFile | null> {
    const u = this.ops.visible(name) ? this.units.get(name) : undefined;
    return u ? simUnitFile(u.spec, this.staleFiles.has(name)) : null;
  }

  followJournal(name: string, signal: AbortSignal, opts: { afterCursor?: string } = {}): AsyncIterable<JournalEntry> {
    return this.unitJournal.follow(name, signal, opts);
  }

  followUnitsJournal(names: string[], signal: AbortSignal, opts: { afterCursor?: string } = {}): AsyncIterable<JournalEntry> {
    const wanted = new Set(names.filter((n) => this.ops.visible(n)));
    return this.unitJournal.followWhere((u) => wanted.has(u), signal, opts);
  }

  /** A unit's simulated state, for the simulated engines' endpoints (./simEngine.ts). */
  simUnit(name: string): SimUnit | undefined {
    return this.ops.visible(name) ? this.units.get(name) : undefined;
  }
}
