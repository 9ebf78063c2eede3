/**
 * GPU faults the agent has seen: Xid messages from the kernel log, each attributed to its GPU
 * (the driver's PCI address matched against nvidia-smi's pci.bus_id) and to the systemd unit of
 * its PID (read from /proc while the process lives, else from the holders in the GPU samples
 * of the last two minutes), with the code's meaning and advice. Bounded; each new fault goes
 * into the event stream as `{ kind: "fault" }`.
 */
import type { AgentEvent } from "../../contract/events";
import type { GpuFault } from "../../contract/faults";
import type { GpuSample } from "../../contract/types";
import type { KernelLogAdapter, KernelMessage, ProcAdapter } from "../adapter";
import { parseXidMessage, pciKey, type XidMessage } from "./xid";
import { xidMeaning } from "./xidCodes";

/** What the fault log needs of the hub. */
export interface FaultHub {
  readonly bootId: string;
  readonly host: { procs: ProcAdapter };
  gpuNow(): GpuSample | null;
  gpuRecent(sinceMs: number): GpuSample[];
  publish(event: AgentEvent): void;
}

export class FaultLog {
  private faults: GpuFault[] = [];
  private count = 0;
  /** messages are attributed one after the other, so faults keep the kernel's order */
  private chain: Promise<void> = Promise.resolve();
  private kernelLog: KernelLogAdapter | null = null;

  constructor(
    private readonly hub: FaultHub,
    private readonly capacity = 1000,
  ) {}

  /** Read faults from this kernel log until close(). */
  start(kernelLog: KernelLogAdapter | undefined): void {
    if (!kernelLog || this.kernelLog) return;
    this.kernelLog = kernelLog;
    kernelLog.start((m) => this.message(m));
  }

  async close(): Promise<void> {
    await this.kernelLog?.close();
    this.kernelLog = null;
  }

  /** A kernel message; non-Xid messages are ignored. Resolves once it is recorded (tests). */
  message(m: KernelMessage): Promise<void> {
    const xid = parseXidMessage(m.message);
    if (!xid) return this.chain;
    this.chain = this.chain.then(() => this.record(m.atMs, xid)).catch(() => undefined);
    return this.chain;
  }

  /** Oldest first; optionally only since a time, or only those of a unit (its PID) or on GPUs it used. */
  list(opts: { sinceMs?: number; unit?: string; gpuUuids?: readonly string[] } = {}): GpuFault[] {
    return this.faults.filter((f) => {
      if (opts.sinceMs !== undefined && f.atMs < opts.sinceMs) return false;
      if (opts.unit === undefined) return true;
      return f.unit === opts.unit || (f.gpuUuid !== null && (opts.gpuUuids ?? []).includes(f.gpuUuid));
    });
  }

  all(): readonly GpuFault[] {
    return this.faults;
  }

  private async record(atMs: number, xid: XidMessage): Promise<void> {
    const samples = [...this.hub.gpuRecent(Date.now() - 120_000), this.hub.gpuNow()].filter((s): s is GpuSample => s !== null);
    const key = pciKey(xid.pci);
    const gpu = samples.at(-1)?.gpus.find((g) => key !== null && pciKey(g.pciBusId) === key);
    const fault: GpuFault = {
      ...xidMeaning(xid.code),
      id: `${this.hub.bootId}-x${++this.count}`,
      kind: "xid",
      atMs,
      pci: xid.pci,
      gpuUuid: gpu?.uuid ?? null,
      gpuIndex: gpu?.index ?? null,
      pid: xid.pid,
      processName: xid.processName,
      unit: await this.unitOf(xid.pid, atMs, samples),
      text: xid.text,
    };
    this.faults.push(fault);
    if (this.faults.length > this.capacity) this.faults.splice(0, this.faults.length - this.capacity);
    this.hub.publish({ kind: "fault", fault });
  }

  private async unitOf(pid: number | null, atMs: number, samples: GpuSample[]): Promise<string | null> {
    if (pid === null) return null;
    try {
      const { info, unit } = await this.hub.host.procs.inspect(pid);
      // a process started after the fault (an old message replayed at agent start) only reuses the PID
      const sameProcess = info.startedAtMs === undefined || info.startedAtMs <= atMs + 1000;
      if (info.state !== "gone" && unit && sameProcess) return unit;
    } catch {
      // fall back to what the GPU samples knew of it
    }
    for (let i = samples.length - 1; i >= 0; i--) {
      for (const g of samples[i]!.gpus) {
        const h = g.holders.find((x) => x.pid === pid && x.unit);
        if (h) return h.unit;
      }
    }
    return null;
  }
}
