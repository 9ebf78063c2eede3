/**
 * The wire contract's domain types: what the agent reports and the panel and the UI show.
 * Part of the contract (server/contract/): imports nothing else of the project.
 *
 * Times: systemd reports microseconds since the epoch (`...Timestamp` properties). We keep
 * that unit (`Usec`) for anything that comes from systemd so nothing is rounded away, and
 * use milliseconds since the epoch (`Ms`) for our own clocks (GPU samples, job bookkeeping).
 */
import type { CrashLoopMarker } from "./faults";
import type { EngineMetrics, Readiness } from "./readiness";
import type { SelfHealMarker } from "./selfHeal";

export type Usec = number; // microseconds since the Unix epoch (systemd's own clock)
export type Ms = number; // milliseconds since the Unix epoch

export type ActiveState = "active" | "reloading" | "inactive" | "failed" | "activating" | "deactivating" | "maintenance";

/** The pair systemd reports; never flatten it: activating/start-pre is not "running". */
export interface UnitStatePair {
  activeState: ActiveState | string;
  subState: string;
}

export type UnitAction = "start" | "stop" | "restart" | "reset-failed" | "kill";
export const UNIT_ACTIONS: readonly UnitAction[] = ["start", "stop", "restart", "reset-failed", "kill"];

/** What the overview needs for one unit. */
export interface UnitSummary extends UnitStatePair {
  name: string; // Id, e.g. "vllm-kimi-k25.service"
  description: string;
  loadState: string; // loaded | not-found | masked | bad-setting | error
  unitFileState: string; // enabled | disabled | static | masked | "" ...
  result: string; // success | exit-code | signal | timeout | core-dump | start-limit-hit | ...
  mainPid: number; // 0 when none
  controlPid: number; // 0 when none
  nRestarts: number;
  /** systemd's StateChangeTimestamp: when the current ActiveState/SubState began. 0 = unknown */
  stateChangeUsec: Usec;
  /** The job systemd is running for the unit right now, if any. */
  job: { id: number; type: string } | null;
  /** Set while the unit restarts in a loop (N restarts in M minutes, GPUDECK_CRASH_LOOP); absent otherwise. */
  crashLoop?: CrashLoopMarker;
  /**
   * Whether the engine under the unit serves yet (./readiness.ts). Set by every agent with
   * readiness (units.list, units.get, unit events); absent from older agents.
   */
  readiness?: Readiness;
  /** What the agent's self-heal (healAfter) last did for the unit, for an hour after; absent otherwise. */
  selfHeal?: SelfHealMarker;
}

export interface ExecCommand {
  path: string;
  argv: string[];
  /** "-" prefix etc.: failures ignored */
  ignoreErrors: boolean;
}

export interface ProcessInfo {
  pid: number;
  /** running | sleeping | zombie | uninterruptible | stopped | gone */
  state: ProcState;
  cmdline: string[];
  /** seconds the process has been alive, when known */
  startedAtMs?: Ms;
}

export type ProcState = "running" | "sleeping" | "zombie" | "uninterruptible" | "stopped" | "gone";

/** An Exec*= command with its last run, as systemd reports it (pid 0 / code 0: it has not run). */
export interface ExecRun extends ExecCommand {
  startUsec: Usec;
  exitUsec: Usec;
  pid: number;
  /** CLD_*: 1 exited, 2 killed, 3 dumped; 0 = not run */
  code: number;
  /** exit status or signal number */
  status: number;
}

/** Everything the unit page shows about one unit. */
export interface UnitDetail extends UnitSummary {
  fragmentPath: string;
  /** NeedDaemonReload: the unit file changed on disk since systemd loaded it; absent from older agents */
  needDaemonReload?: boolean;
  controlGroup: string;
  execMainCode: number; // CLD_* : 1 exited, 2 killed, 3 dumped
  execMainStatus: number; // exit status or signal number
  execMainStartUsec: Usec;
  execMainExitUsec: Usec;
  execStartPre: ExecCommand[];
  execStart: ExecCommand[];
  execStopPost: ExecCommand[];
  timeoutStartUsec: number; // duration in µs; 0 / max = infinity
  timeoutStopUsec: number;
  restart: string; // no | on-failure | always ...
  restartUsec: number;
  startLimitBurst: number;
  startLimitIntervalUsec: number;
  timestamps: {
    inactiveExitUsec: Usec;
    activeEnterUsec: Usec;
    activeExitUsec: Usec;
    inactiveEnterUsec: Usec;
  };
  /** The control process (ExecStartPre, ExecStop ...) with its command line, if one runs. */
  controlProcess: ProcessInfo | null;
  mainProcess: ProcessInfo | null;
  /** All processes in the unit's cgroup. */
  processes: ProcessInfo[];
  /**
   * Units it cannot run without: the union of systemd's Requires=, BindsTo= and Requisite=
   * (incl. implicit ones such as system.slice), in systemd's order, without duplicates.
   */
  requires: string[];
  /** ExecCondition= commands and their last run (a start is skipped when one exits 1–254); absent from older agents */
  execCondition?: ExecRun[];
  /** units.get: the engine's scraped metrics (./readiness.ts); null when none are scraped */
  engine?: EngineMetrics | null;
}

/**
 * A unit's state and nothing else. Readable for any unit systemd names as a dependency, also one
 * outside the allow-list: it says what the unit is, never lets anyone act on it.
 */
export interface UnitStateReading extends UnitStatePair {
  name: string;
  loadState: string;
  result: string;
}

/** One ActiveState/SubState change, at systemd's own timestamp. */
export interface UnitTransition {
  unit: string;
  atUsec: Usec;
  from: UnitStatePair | null; // null: first observation
  to: UnitStatePair;
  result: string;
  mainPid: number;
  controlPid: number;
  nRestarts: number;
  /** A transient failed/failed or auto-restart step inside a Restart= cycle. */
  inRestartCycle: boolean;
}

/**
 * A span in which no agent watched the host (it was stopped, crashed or upgrading). Unit
 * transitions inside it were rebuilt afterwards from systemd's timestamps (no substates), and
 * GPU memory was not sampled.
 */
export interface ObservationGap {
  fromMs: Ms;
  toMs: Ms;
}

export type JobResult = "done" | "canceled" | "timeout" | "failed" | "dependency" | "skipped";

export interface JobEvent {
  jobId: number;
  unit: string;
  jobType: string; // start | stop | restart | reset-failed ...
  phase: "queued" | "running" | "finished";
  result?: JobResult | string;
  atMs: Ms;
}

export interface JournalEntry {
  /** __CURSOR, unique */
  cursor: string;
  atUsec: Usec; // __REALTIME_TIMESTAMP
  unit: string;
  priority: number; // 0 emerg … 7 debug
  pid: number | null;
  message: string;
  jobResult?: string;
}

/** State of a connection to something the agent depends on (systemd, nvidia-smi). */
export interface BackendStatus {
  state: "ok" | "connecting" | "unreachable" | "stale" | "error" | "disabled";
  message: string;
  sinceMs: Ms;
}

// ---------------------------------------------------------------------------------------
// GPU telemetry

/** One GPU as nvidia-smi reports it in one sample. `null` = not a number in the output. */
export interface GpuReading {
  uuid: string;
  index: number | null;
  name: string;
  pciBusId: string;
  memoryTotalMiB: number | null;
  memoryUsedMiB: number | null;
  utilizationPct: number | null;
  temperatureC: number | null;
  powerW: number | null;
  /** power.limit, W; null or absent = not reported */
  powerLimitW?: number | null;
  /** utilization.memory (memory controller busy), %; null or absent = not reported */
  memoryUtilizationPct?: number | null;
  /** clocks.sm and clocks.max.sm, MHz; null or absent = not reported */
  smClockMHz?: number | null;
  smClockMaxMHz?: number | null;
  /**
   * Why clocks are held down (clocks_event_reasons.active, decoded: "sw_power_cap",
   * "hw_thermal_slowdown" …; "gpu_idle" and "applications_clocks_setting" included as reported);
   * [] = none; null or absent = not reported.
   */
  throttleReasons?: string[] | null;
  /** ECC errors since the driver loaded (ecc.errors.*.volatile.total); null or absent = not reported (ECC off or unsupported) */
  eccCorrectedVolatile?: number | null;
  eccUncorrectedVolatile?: number | null;
}

/** One row of --query-compute-apps. */
export interface ComputeApp {
  gpuUuid: string;
  pid: number;
  processName: string;
  usedMiB: number | null;
}

/** A raw sample as the adapter delivers it. */
export interface GpuRawSample {
  atMs: Ms;
  gpus: GpuReading[];
  /** null when the compute-apps query failed this time (keep the previous holders) */
  apps: ComputeApp[] | null;
}

export type HolderKind = "unit" | "outside" | "exited";

/** A share of one GPU's memory, attributed. */
export interface GpuHolder {
  kind: HolderKind;
  pid: number;
  /** systemd unit (e.g. vllm-kimi-k25.service) for kind=unit, or the last known unit for exited */
  unit: string | null;
  processName: string;
  cmdline: string[];
  state: ProcState;
  usedMiB: number;
  /** nvidia-smi printed no number for this process's memory ([N/A], e.g. Windows WDDM): `usedMiB` is 0 but means "unknown" — never show it as 0 */
  usedMiBUnknown?: true;
  /** for exited holders: when the process was last seen alive */
  exitedAtMs?: Ms;
}

export interface GpuAttributed extends GpuReading {
  holders: GpuHolder[];
  /** memory.used minus everything attributed to a listed process, when positive */
  unattributedMiB: number;
}

export interface GpuSample {
  atMs: Ms;
  gpus: GpuAttributed[];
  /** Unified-memory hosts (GB10: memory.used/total are [N/A]): the host memory the GPU shares (/proc/meminfo) */
  memoryPool?: MemoryPool;
}

/** The host's memory as the pool a unified-memory GPU allocates from. */
export interface MemoryPool {
  totalMiB: number;
  availableMiB: number;
  unified: true;
}
