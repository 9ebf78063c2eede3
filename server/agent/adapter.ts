/**
 * The one interface the OS-facing adapters implement: the real ones (systemd over D-Bus,
 * nvidia-smi, /proc) and the simulator. Nothing above it knows which one it talks to.
 */
import type {
  BackendStatus,
  GpuRawSample,
  JobEvent,
  JournalEntry,
  ProcessInfo,
  UnitAction,
  UnitDetail,
  UnitStateReading,
  UnitSummary,
  UnitTransition,
} from "../contract/types";
import type { UnitFile } from "../contract/journalSearch";
import type { JournalRead, JournalSearchQuery, SearchOptions } from "./systemd/journalSearch";

export type SystemdEvent =
  | { type: "transition"; transition: UnitTransition }
  | { type: "unit"; unit: UnitSummary } // properties changed (job, NRestarts, PIDs ...)
  | { type: "unit-removed"; name: string }
  | { type: "job"; job: JobEvent }
  | { type: "status"; status: BackendStatus };

export interface SystemdAdapter {
  /** Connect and begin emitting events; resolves once the first full read is done or failed. */
  start(onEvent: (e: SystemdEvent) => void): Promise<void>;
  close(): Promise<void>;
  status(): BackendStatus;
  /** Units matching the configured globs, as last read. */
  list(): UnitSummary[];
  /**
   * After the agent itself was not running: the transitions from `last` (recorded by an
   * earlier run) to the unit's current state, rebuilt from systemd's per-state timestamps
   * (subState "" where a step was not observed). Optional: without it the hub records one
   * step from `last` to the current state.
   */
  transitionsSince?(name: string, last: UnitTransition): UnitTransition[];
  /** Fresh detail, or null if systemd does not know it (LoadState tells more when it does). */
  get(name: string): Promise<UnitDetail | null>;
  /**
   * Read-only: the current state of units named by an allowed unit's `requires`, whether or not
   * they match the globs (so a diagnosis can name a failed dependency). In the order of `names`;
   * invalid names and units it could not read are left out (a unit systemd does not know reads
   * as loadState "not-found"). Optional: without it there are no dependency facts.
   */
  readStates?(names: string[]): Promise<UnitStateReading[]>;
  /** Queue a job and return at once with systemd's job id. Never waits for the job. */
  act(name: string, action: UnitAction): Promise<{ jobId: number | null }>;
  journal(name: string, lines: number): Promise<JournalEntry[]>;
  /**
   * Live journal tail; ends when signal aborts. With `afterCursor` (a reconnecting client's last
   * line) it first sends what was written after that line, so a reconnect loses nothing.
   */
  followJournal(name: string, signal: AbortSignal, opts?: { afterCursor?: string }): AsyncIterable<JournalEntry>;
  /**
   * One live tail over several units (the agent's own readiness reader; never per viewer). With
   * `afterCursor` it first sends what came after that entry. Optional: without it readiness
   * comes from probes alone.
   */
  followUnitsJournal?(names: string[], signal: AbortSignal, opts?: { afterCursor?: string }): AsyncIterable<JournalEntry>;
  /**
   * Journal search (units.journal with filters, its histogram, downloads): lines of the unit (and
   * the kernel's NVIDIA lines for `kernelPci`) within the filters, bounded by `opts.bounds` in
   * lines, bytes and time. Optional: without it units.journal only reads the last lines.
   */
  searchJournal?(q: JournalSearchQuery, opts: SearchOptions): Promise<JournalRead>;
  /** units.file: the fragment, drop-ins and NeedDaemonReload, unmasked (the agent's output is redacted); null for an unknown unit. Optional. */
  readUnitFile?(name: string): Promise<UnitFile | null>;
  /** Values of `keys` in the unit's Environment= (nothing else is read). Optional. */
  readEnvironment?(name: string, keys: readonly string[]): Promise<Record<string, string>>;
}

export interface GpuAdapter {
  start(onSample: (s: GpuRawSample) => void, onStatus: (s: BackendStatus) => void): void;
  close(): Promise<void>;
  status(): BackendStatus;
}

export interface ProcAdapter {
  /** State, command line and systemd unit of a PID (unit null when outside any unit). */
  inspect(pid: number): Promise<{ info: ProcessInfo; unit: string | null }>;
  /** The host's MemTotal/MemAvailable (/proc/meminfo), the pool of unified-memory GPUs. Optional: without it no pool is shown. */
  meminfo?(): Promise<HostMemory | null>;
  /**
   * SIGKILL `pid` only if it is still the process that started at `startedAtMs` (a reused PID is
   * left alone). Optional: without it GPU holders cannot be killed from gpudeck.
   */
  killProcess?(pid: number, startedAtMs: number): Promise<KillOutcome>;
}

export interface HostMemory {
  totalMiB: number;
  availableMiB: number;
}

export type KillOutcome = { killed: true } | { killed: false; reason: string };

/** One kernel log message (`journalctl -k`): where GPU faults (NVIDIA Xid) are reported. */
export interface KernelMessage {
  atMs: number;
  message: string;
}

export interface KernelLogAdapter {
  /** Deliver this boot's recent kernel messages, then new ones as they come, until close(). Never throws. */
  start(onMessage: (m: KernelMessage) => void): void;
  close(): Promise<void>;
}

/** One GET to an engine's own HTTP endpoint (health, models, metrics) on this host. */
export interface EngineHttpRequest {
  /** the unit the engine runs under (the simulator answers by unit) */
  unit: string;
  url: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** a longer body is cut here */
  maxBytes?: number;
}

export type EngineHttpResponse = { kind: "response"; status: number; body: string } | { kind: "refused" | "timeout" | "error"; message: string };

/** Readiness probes: the real one fetches loopback/host-local URLs only; the simulator plays engines. */
export interface EngineHttp {
  get(req: EngineHttpRequest): Promise<EngineHttpResponse>;
}

export interface HostAdapter {
  kind: "simulator" | "real";
  systemd: SystemdAdapter;
  gpu: GpuAdapter;
  procs: ProcAdapter;
  /** Optional: without it no GPU faults are read. */
  kernelLog?: KernelLogAdapter;
  /** Optional: without it no engine is probed (readiness then comes from the journal alone). */
  engines?: EngineHttp;
}
