/**
 * One simulated unit's mutable state: what systemd would report of it (summary, exec status,
 * per-state timestamps), its processes, its job and its pending timers.
 */
import type { UnitSummary } from "../../contract/types";
import type { SimUnitSpec } from "./units";
import type { SimProcess } from "./world";

export interface SimTiming {
  /** divide every delay by this (tests run the demo faster) */
  speed: number;
  /** how long a killed/stopped process's GPU memory takes to drain */
  drainMs: number;
  stopDrainMs: number;
}

/** The inference engine a unit's main process runs, as its probes see it (./simEngine.ts). */
export interface SimEngineState {
  /** the main process it belongs to (a later process of the unit has its own) */
  pid: number;
  model: string;
  /** vLLM refuses connections until its API server listens */
  listening: boolean;
  readyAtMs: number | null;
}

export interface SimJob {
  id: number;
  type: string;
}

export class SimUnit {
  summary: UnitSummary;
  execMainCode = 0;
  execMainStatus = 0;
  execMainStartUsec = 0;
  execMainExitUsec = 0;
  timestamps = { inactiveExitUsec: 0, activeEnterUsec: 0, activeExitUsec: 0, inactiveEnterUsec: 0 };
  control: SimProcess | null = null;
  main: SimProcess | null = null;
  workers: SimProcess[] = [];
  engine: SimEngineState | null = null;
  job: SimJob | null = null;
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
