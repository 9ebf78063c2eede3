/**
 * The simulated host's physical side: GPUs, processes and the memory they hold.
 * Memory of a process that died is released gradually (as a real driver does on a large
 * node), which is what keeps a restarted unit's ExecStartPre waiting in the demo.
 */
import type { ComputeApp, GpuReading, Ms, ProcState } from "../../contract/types";

export interface SimGpu {
  uuid: string;
  index: number;
  name: string;
  pciBusId: string;
  totalMiB: number;
}

interface Allocation {
  uuid: string;
  targetMiB: number;
  /** allocation grows linearly from 0 to targetMiB over rampMs (model loading) */
  startMs: Ms;
  rampMs: number;
}

interface Draining {
  uuid: string;
  fromMiB: number;
  startMs: Ms;
  durationMs: number;
}

export interface SimProcess {
  pid: number;
  cmdline: string[];
  unit: string | null;
  state: ProcState;
  startedAtMs: Ms;
  diedAtMs: Ms | null;
  allocations: Allocation[];
  /** utilisation this process drives while alive, 0..100 */
  busyPct: number;
}

/** A unified-memory GPU (GB10 / DGX Spark): it allocates from the host's memory; nvidia-smi reports [N/A] for memory.used/total. */
export interface SimUnifiedMemory {
  hostTotalMiB: number;
  /** what the OS and everything else use */
  baseUsedMiB: number;
}

export class SimWorld {
  readonly gpus: SimGpu[];
  private processes = new Map<number, SimProcess>();
  private draining: Draining[] = [];
  private nextPid = 4100;

  constructor(
    gpuCount: number,
    private now: () => Ms,
    readonly unified: SimUnifiedMemory | null = null,
  ) {
    this.gpus = Array.from({ length: gpuCount }, (_, i) => ({
      uuid: `GPU-5a1c${i.toString(16)}e7b-3f0d-4c2a-9b6e-${(0x1f3a5c7e9b00 + i * 0x1111).toString(16).padStart(12, "0")}`,
      index: i,
      name: unified ? "NVIDIA GB10" : "NVIDIA H200",
      pciBusId: `00000000:${(0x18 + i * 0x10).toString(16).toUpperCase().padStart(2, "0")}:00.0`,
      totalMiB: unified ? unified.hostTotalMiB : 143771,
    }));
  }

  /** /proc/meminfo of the simulated host; null unless its GPU shares the host's memory. */
  meminfo(): { totalMiB: number; availableMiB: number } | null {
    if (!this.unified) return null;
    const onGpu = this.gpus.reduce((sum, g) => sum + this.usedMiB(g.uuid), 0);
    return { totalMiB: this.unified.hostTotalMiB, availableMiB: Math.max(0, Math.round(this.unified.hostTotalMiB - this.unified.baseUsedMiB - onGpu)) };
  }

  spawn(cmdline: string[], unit: string | null, busyPct = 0): SimProcess {
    const proc: SimProcess = {
      pid: this.nextPid,
      cmdline,
      unit,
      state: "sleeping",
      startedAtMs: this.now(),
      diedAtMs: null,
      allocations: [],
      busyPct,
    };
    this.nextPid += 1 + Math.floor(Math.random() * 7);
    this.processes.set(proc.pid, proc);
    return proc;
  }

  allocate(pid: number, uuid: string, targetMiB: number, rampMs = 0): void {
    const proc = this.processes.get(pid);
    if (!proc || proc.diedAtMs !== null) return;
    proc.allocations.push({ uuid, targetMiB, startMs: this.now(), rampMs });
  }

  /** The process exits; its GPU memory drains to zero over drainMs. */
  exit(pid: number, drainMs: number): void {
    const proc = this.processes.get(pid);
    if (!proc || proc.diedAtMs !== null) return;
    const now = this.now();
    for (const a of proc.allocations) {
      const held = allocationAt(a, now);
      if (held > 0) this.draining.push({ uuid: a.uuid, fromMiB: held, startMs: now, durationMs: Math.max(1, drainMs) });
    }
    proc.allocations = [];
    proc.diedAtMs = now;
    proc.state = "gone";
  }

  process(pid: number): SimProcess | undefined {
    return this.processes.get(pid);
  }

  isAlive(pid: number): boolean {
    const p = this.processes.get(pid);
    return !!p && p.diedAtMs === null;
  }

  /** Memory in use on one GPU right now, live and draining. */
  usedMiB(uuid: string, now = this.now()): number {
    let used = 0;
    for (const p of this.processes.values()) {
      for (const a of p.allocations) if (a.uuid === uuid) used += allocationAt(a, now);
    }
    for (const d of this.draining) if (d.uuid === uuid) used += drainingAt(d, now);
    return Math.round(used);
  }

  readings(): { gpus: GpuReading[]; apps: ComputeApp[] } {
    const now = this.now();
    this.draining = this.draining.filter((d) => drainingAt(d, now) > 0);
    // forget processes dead for a while so the table stays bounded
    for (const [pid, p] of this.processes) if (p.diedAtMs !== null && now - p.diedAtMs > 600_000) this.processes.delete(pid);

    const apps: ComputeApp[] = [];
    const busy = new Map<string, number>();
    for (const p of this.processes.values()) {
      if (p.diedAtMs !== null) continue;
      const perGpu = new Map<string, number>();
      for (const a of p.allocations) perGpu.set(a.uuid, (perGpu.get(a.uuid) ?? 0) + allocationAt(a, now));
      for (const [uuid, mib] of perGpu) {
        apps.push({ gpuUuid: uuid, pid: p.pid, processName: p.cmdline[0] ?? "?", usedMiB: Math.round(mib) });
        busy.set(uuid, Math.max(busy.get(uuid) ?? 0, p.busyPct));
      }
    }
    const gpus = this.gpus.map((g): GpuReading => {
      const used = this.usedMiB(g.uuid, now);
      const util = busy.get(g.uuid) ?? 0;
      const jitter = util > 0 ? Math.round((Math.random() - 0.5) * 12) : 0;
      const utilPct = Math.max(0, Math.min(100, util + jitter));
      const powerW = Math.round((118 + utilPct * 5.2 + (used > 0 ? 40 : 0)) * 10) / 10;
      return {
        uuid: g.uuid,
        index: g.index,
        name: g.name,
        pciBusId: g.pciBusId,
        // unified memory: nvidia-smi prints [N/A] for both
        memoryTotalMiB: this.unified ? null : g.totalMiB,
        memoryUsedMiB: this.unified ? null : used,
        utilizationPct: utilPct,
        temperatureC: Math.round(33 + utilPct * 0.38 + (used / g.totalMiB) * 4),
        powerW,
        powerLimitW: POWER_LIMIT_W,
        memoryUtilizationPct: Math.round(utilPct * 0.45),
        // the SM clock drops when the power draw reaches the limit (as sw_power_cap would)
        smClockMHz: utilPct === 0 ? 345 : powerW >= POWER_LIMIT_W * 0.95 ? 1650 : SM_CLOCK_MAX_MHZ,
        smClockMaxMHz: SM_CLOCK_MAX_MHZ,
        // a healthy data-centre GPU with ECC on: counts reported, and zero
        eccCorrectedVolatile: 0,
        eccUncorrectedVolatile: 0,
      };
    });
    return { gpus, apps };
  }
}

const POWER_LIMIT_W = 700;
const SM_CLOCK_MAX_MHZ = 1980;

function allocationAt(a: Allocation, now: Ms): number {
  if (a.rampMs <= 0) return a.targetMiB;
  const f = Math.min(1, Math.max(0, (now - a.startMs) / a.rampMs));
  return a.targetMiB * f;
}

function drainingAt(d: Draining, now: Ms): number {
  const f = Math.min(1, Math.max(0, (now - d.startMs) / d.durationMs));
  return d.fromMiB * (1 - f);
}
