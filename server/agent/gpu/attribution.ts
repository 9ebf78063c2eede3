/**
 * GPU memory → process → systemd unit, and memory held by processes that no longer exist.
 *
 * Pure logic above the adapter interfaces (it only talks to a ProcAdapter), so the real agent
 * and the simulator share it. Per GPU it remembers the last known holders; when a holder
 * vanishes and the GPU's memory does not drop with it (device memory is released late, in the
 * dying process's exit path — the incident behind gpudeck), the unexplained memory is shown
 * as held by that exited process, with since-when and its last known pid/unit/name, until it
 * drains.
 */
import type { ComputeApp, GpuAttributed, GpuHolder, GpuRawSample, GpuSample, Ms, ProcState, ProcessInfo } from "../../contract/types";
import type { ProcAdapter } from "../adapter";

export interface GpuAttributorOptions {
  /** unexplained memory up to this is noise, not an exited holder (default 16 MiB) */
  toleranceMiB?: number;
  /** an exited process is not blamed for memory longer than this after it vanished (default 10 min) */
  maxExitedAgeMs?: number;
  /** state of a GPU not seen for this long is dropped (default 10 min) */
  forgetGpuAfterMs?: number;
}

interface KnownHolder {
  pid: number;
  unit: string | null;
  processName: string;
  cmdline: string[];
  usedMiB: number;
  startedAtMs?: Ms;
  /** last sample in which the process was alive; null if it was never seen alive */
  lastSeenAliveAtMs: Ms | null;
  /** first sample in which it was listed but dead */
  firstSeenDeadAtMs: Ms | null;
}

interface DepartedHolder extends KnownHolder {
  departedAtMs: Ms;
  exitedAtMs: Ms;
  /** the GPU's unexplained memory just before this holder vanished */
  baselineMiB: number;
}

interface GpuMemory {
  holders: Map<number, KnownHolder>;
  departed: DepartedHolder[];
  lastApps: ComputeApp[];
  lastUnexplainedMiB: number;
  lastSeenAtMs: Ms;
}

type Inspection = { info: ProcessInfo; unit: string | null };

const DEAD_STATES: ReadonlySet<ProcState> = new Set(["gone", "zombie"]);

export class GpuAttributor {
  private readonly toleranceMiB: number;
  private readonly maxExitedAgeMs: number;
  private readonly forgetGpuAfterMs: number;
  private readonly gpus = new Map<string, GpuMemory>();

  constructor(
    private readonly procs: ProcAdapter,
    opts: GpuAttributorOptions = {},
  ) {
    this.toleranceMiB = opts.toleranceMiB ?? 16;
    this.maxExitedAgeMs = opts.maxExitedAgeMs ?? 10 * 60_000;
    this.forgetGpuAfterMs = opts.forgetGpuAfterMs ?? 10 * 60_000;
  }

  async attribute(raw: GpuRawSample): Promise<GpuSample> {
    const now = raw.atMs;
    // Which apps each GPU lists now; when the compute-apps query failed, the previous ones.
    const listedByGpu = new Map<string, ComputeApp[]>();
    for (const gpu of raw.gpus) {
      const mem = this.memory(gpu.uuid, now);
      listedByGpu.set(gpu.uuid, raw.apps ? raw.apps.filter((a) => a.gpuUuid === gpu.uuid) : mem.lastApps);
    }

    // Inspect every pid once: listed ones and known holders that may have vanished.
    const pids = new Set<number>();
    for (const [uuid, apps] of listedByGpu) {
      for (const a of apps) pids.add(a.pid);
      for (const pid of this.gpus.get(uuid)!.holders.keys()) pids.add(pid);
    }
    const inspections = new Map<number, Inspection>();
    await Promise.all(
      [...pids].map(async (pid) => {
        inspections.set(pid, await this.inspect(pid));
      }),
    );

    const gpus: GpuAttributed[] = raw.gpus.map((gpu) => {
      const mem = this.gpus.get(gpu.uuid)!;
      const listed = listedByGpu.get(gpu.uuid)!;
      mem.lastApps = listed;
      const holders: GpuHolder[] = [];
      const listedPids = new Set<number>();

      for (const app of listed) {
        if (listedPids.has(app.pid)) continue;
        listedPids.add(app.pid);
        const ins = inspections.get(app.pid)!;
        let known = mem.holders.get(app.pid);
        // A reused pid is a different process.
        if (known && isReused(known, ins)) known = undefined;
        const usedMiB = app.usedMiB ?? 0;
        // [N/A] (e.g. Windows WDDM): counted as 0 in sums, flagged so nothing shows or exports it as 0
        const unknown = app.usedMiB === null ? ({ usedMiBUnknown: true } as const) : {};
        if (!DEAD_STATES.has(ins.info.state)) {
          const unit = ins.unit;
          const processName = app.processName || known?.processName || ins.info.cmdline[0] || "";
          holders.push({
            kind: unit ? "unit" : "outside",
            pid: app.pid,
            unit,
            processName,
            cmdline: ins.info.cmdline,
            state: ins.info.state,
            usedMiB,
            ...unknown,
          });
          mem.holders.set(app.pid, {
            pid: app.pid,
            unit,
            processName,
            cmdline: ins.info.cmdline,
            usedMiB,
            startedAtMs: ins.info.startedAtMs,
            lastSeenAliveAtMs: now,
            firstSeenDeadAtMs: null,
          });
        } else {
          // Listed by the driver, but the process is gone or a zombie: its memory is draining.
          const firstSeenDeadAtMs = known?.firstSeenDeadAtMs ?? now;
          const entry: KnownHolder = {
            pid: app.pid,
            unit: ins.unit ?? known?.unit ?? null,
            processName: app.processName || known?.processName || "",
            cmdline: known?.cmdline.length ? known.cmdline : ins.info.cmdline,
            usedMiB,
            startedAtMs: known?.startedAtMs,
            lastSeenAliveAtMs: known?.lastSeenAliveAtMs ?? null,
            firstSeenDeadAtMs,
          };
          mem.holders.set(app.pid, entry);
          holders.push({
            kind: "exited",
            pid: app.pid,
            unit: entry.unit,
            processName: entry.processName,
            cmdline: entry.cmdline,
            state: ins.info.state,
            usedMiB,
            ...unknown,
            exitedAtMs: entry.lastSeenAliveAtMs ?? firstSeenDeadAtMs,
          });
        }
      }

      // Known holders no longer listed. Only a fresh listing says a holder left.
      for (const [pid, known] of mem.holders) {
        if (listedPids.has(pid)) continue;
        if (!raw.apps) continue;
        mem.holders.delete(pid);
        const ins = inspections.get(pid)!;
        const stillAlive = !DEAD_STATES.has(ins.info.state) && !isReused(known, ins);
        // Alive and unlisted: it freed its memory itself. Dead: its memory may still drain.
        if (stillAlive) continue;
        mem.departed.push({
          ...known,
          departedAtMs: now,
          exitedAtMs: known.lastSeenAliveAtMs ?? known.firstSeenDeadAtMs ?? now,
          baselineMiB: mem.lastUnexplainedMiB,
        });
      }

      const listedMiB = holders.reduce((sum, h) => sum + h.usedMiB, 0);
      const used = gpu.memoryUsedMiB;
      let unexplained = used === null ? 0 : Math.max(0, used - listedMiB);

      // Blame the unexplained memory above the old baseline on holders that vanished
      // recently, newest first; one that no longer explains anything has drained.
      mem.departed = mem.departed.filter((d) => now - d.departedAtMs <= this.maxExitedAgeMs && !listedPids.has(d.pid));
      if (used === null) mem.departed = [];
      if (mem.departed.length > 0) {
        const baseline = Math.min(...mem.departed.map((d) => d.baselineMiB));
        let pool = Math.max(0, unexplained - baseline);
        const keep: DepartedHolder[] = [];
        for (const d of [...mem.departed].sort((a, b) => b.departedAtMs - a.departedAtMs)) {
          const claim = Math.min(d.usedMiB, pool);
          if (claim <= this.toleranceMiB) continue;
          pool -= claim;
          unexplained -= claim;
          keep.push(d);
          holders.push({
            kind: "exited",
            pid: d.pid,
            unit: d.unit,
            processName: d.processName,
            cmdline: d.cmdline,
            state: "gone",
            usedMiB: claim,
            exitedAtMs: d.exitedAtMs,
          });
        }
        mem.departed = keep;
      }
      mem.lastUnexplainedMiB = unexplained;
      return { ...gpu, holders, unattributedMiB: unexplained };
    });

    for (const [uuid, mem] of this.gpus) {
      if (now - mem.lastSeenAtMs > this.forgetGpuAfterMs) this.gpus.delete(uuid);
    }
    return { atMs: raw.atMs, gpus };
  }

  private memory(uuid: string, now: Ms): GpuMemory {
    let mem = this.gpus.get(uuid);
    if (!mem) {
      mem = { holders: new Map(), departed: [], lastApps: [], lastUnexplainedMiB: 0, lastSeenAtMs: now };
      this.gpus.set(uuid, mem);
    }
    mem.lastSeenAtMs = now;
    return mem;
  }

  private async inspect(pid: number): Promise<Inspection> {
    try {
      return await this.procs.inspect(pid);
    } catch {
      return { info: { pid, state: "gone", cmdline: [] }, unit: null };
    }
  }
}

function isReused(known: KnownHolder, ins: Inspection): boolean {
  return (
    known.startedAtMs !== undefined &&
    ins.info.startedAtMs !== undefined &&
    !DEAD_STATES.has(ins.info.state) &&
    Math.abs(known.startedAtMs - ins.info.startedAtMs) > 1
  );
}
