/**
 * GPU faults: NVIDIA Xid messages from the kernel log (`NVRM: Xid (PCI:0000:3b:00): 79, pid=…,
 * name=…, GPU has fallen off the bus.`), attributed to the GPU and, through the PID, to the
 * systemd unit; and the crash-loop marker the overview shows. Part of the contract: imports
 * nothing else of the project.
 */
/** ms / µs since the epoch (as in ./types.ts, which imports this file) */
type Ms = number;
type Usec = number;

export type FaultSeverity = "info" | "warning" | "critical";

/** What an Xid code means and what to do about it (the agent's table of common codes). */
export interface XidMeaning {
  code: number;
  /** short name, e.g. "GPU has fallen off the bus" */
  title: string;
  /** one or two sentences on the likely cause */
  meaning: string;
  /** the next step */
  advice: string;
  /** restarting the unit will not help: the GPU (or the host) needs a reset */
  resetRequired: boolean;
  severity: FaultSeverity;
}

export interface GpuFault extends XidMeaning {
  /** stable within an agent run: `<boot>-x<n>` */
  id: string;
  kind: "xid";
  /** the kernel message's time (journal __REALTIME_TIMESTAMP) */
  atMs: Ms;
  /** PCI address as the driver printed it, e.g. "0000:3b:00" */
  pci: string;
  gpuUuid: string | null;
  gpuIndex: number | null;
  /** pid=… of the message; null when the driver printed none ("'<unknown>'") */
  pid: number | null;
  /** name=… of the message */
  processName: string | null;
  /** the unit of that PID (while it lived, or from the GPU samples' holders); null = none known */
  unit: string | null;
  /** the message after the code, as the driver wrote it */
  text: string;
}

/** An automatic restart loop: N restarts within M minutes (GPUDECK_CRASH_LOOP, default 5/10m). */
export interface CrashLoopMarker {
  restarts: number;
  windowMs: number;
  /** the rule as configured, e.g. "5/10m" */
  rule: string;
  firstAtUsec: Usec;
  lastAtUsec: Usec;
  /**
   * Whether systemd's start limit can end it: false for Restart=always without an effective
   * StartLimitBurst/StartLimitIntervalSec (e.g. RestartSec ≥ 2 s with the default 5 per 10 s);
   * null until the unit's settings were read.
   */
  startLimitStops: boolean | null;
}

/** One automatic restart as the crash-loop evidence lists it. */
export interface CrashLoopRestart {
  atUsec: Usec;
  /** Result= of the run that ended (exit-code, signal, …) */
  result: string;
  /** "status=1/FAILURE" or "signal=9/KILL" from systemd's "Main process exited" line, when in the journal */
  exit: string | null;
}

/** `units.crashLoop`: whether the unit loops, and the evidence "stop the loop" shows. */
export interface CrashLoopReport {
  unit: string;
  marker: CrashLoopMarker | null;
  restarts: CrashLoopRestart[];
  restart: string;
  restartUsec: number;
  startLimitBurst: number;
  startLimitIntervalUsec: number;
  /** the last line the service itself wrote (not systemd's), when known */
  lastLogLine: { atUsec: Usec; message: string } | null;
  /** true where the panel removed `lastLogLine` because the caller may not read journals (contract/roleViews.ts) */
  lastLogLineHidden?: boolean;
}
