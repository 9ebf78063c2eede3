/**
 * Input and output of the "why won't it start?" engine (`diagnose()` in ./diagnose.ts).
 * Pure data: the agent assembles `DiagnosisFacts` from what it already tracks and the panel
 * renders the returned `Diagnosis`. Nothing here touches systemd, nvidia-smi or /proc.
 */
import type { GpuSample, JobEvent, JournalEntry, Ms, UnitDetail, UnitStateReading, UnitTransition } from "../contract/types";
import type { CrashLoopMarker, GpuFault } from "../contract/faults";
import type { ActionRecord } from "../contract/events";
import type { Readiness } from "../contract/readiness";

export interface DiagnosisFacts {
  /** "Now" on the agent's clock (ms since the epoch); every age and ETA is relative to it. */
  nowMs: Ms;
  /** Fresh detail; null = systemd does not know the unit at all. */
  unit: UnitDetail | null;
  /** The name the user asked about (used when `unit` is null). */
  requestedName: string;
  /** This unit's transitions, oldest → newest (the last ~50). */
  recentTransitions: UnitTransition[];
  /** Latest attributed GPU sample; null = no GPU telemetry. */
  gpuNow: GpuSample | null;
  /** Samples of the last ~60 s, oldest → newest (used for the drain rate). May include gpuNow. */
  gpuRecent: GpuSample[];
  /** The unit's last ~50 journal lines, oldest → newest. */
  journal: JournalEntry[];
  /** The job systemd runs for the unit right now, if any. */
  job: { id: number; type: string } | null;
  /**
   * GPU uuids the unit used last time it ran. When absent, `diagnose()` derives them from the
   * holders in gpuRecent/gpuNow (see `gpusUsedByUnit`), else assumes every GPU.
   */
  unitGpus?: string[];
  /**
   * Optional: recent job events of this unit (oldest → newest). Lets a finished start job with
   * result "dependency" be recognised even when the journal line is not in `journal`.
   */
  recentJobs?: JobEvent[];
  /**
   * Optional: the units this one requires (`unit.requires`: Requires=/BindsTo=/Requisite=, the
   * first few) as they are now. Lets "dependency-failed" name the failed one. The agent reads
   * them only when the diagnosis is "dependency-failed" (see ./dependencies.ts).
   */
  dependencies?: DependencyState[];
  /** Optional: GPU faults (Xid) from the unit's PIDs or on its GPUs, oldest → newest. */
  faults?: GpuFault[];
  /** Optional: the agent's crash-loop marker (N restarts in M minutes), when it loops now. */
  crashLoop?: CrashLoopMarker | null;
  /** Optional: whether the engine under the unit serves yet, its load stage or its fatal error. */
  readiness?: Readiness | null;
  /**
   * Optional: actions people took on this unit through gpudeck, oldest → newest. A start that
   * systemd refused has no job, only the action's error ("Unit nothere.service not found.").
   */
  recentActions?: ActionRecord[];
}

/** A unit the diagnosed one requires, as it is now. */
export interface DependencyState extends UnitStateReading {
  /**
   * In this agent's allow-list (GPUDECK_UNITS): the panel may open it (and act on it there).
   * False for units the agent may only read the state of, e.g. a mount outside the globs.
   */
  manageable: boolean;
}
