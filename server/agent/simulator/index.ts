/**
 * The simulated host: systemd, nvidia-smi and /proc behind the same HostAdapter interface as
 * the real ones. Used by `npm run demo` and by tests that need a host without root.
 */
import type { BackendStatus, GpuRawSample, JournalEntry } from "../../contract/types";
import type { GpuAdapter, HostAdapter, KernelLogAdapter, KernelMessage, ProcAdapter } from "../adapter";
import { SimEngineHttp } from "./simEngine";
import { SimSystemd, type SimTiming } from "./systemd";
import { profileHardware, profileUnits, type SimProfile } from "./profiles";
import { SimWorld } from "./world";

export interface SimulatedHostOptions {
  unitGlobs: string[];
  gpuIntervalMs?: number;
  timing?: Partial<SimTiming>;
  /** which host to play (default: the incident) */
  profile?: SimProfile;
}

export function createSimulatedHost(opts: SimulatedHostOptions): HostAdapter & { world: SimWorld; kernelLog: SimKernelLog } {
  const timing: SimTiming = { speed: 1, drainMs: 30_000, stopDrainMs: 8_000, ...opts.timing };
  const profile = opts.profile ?? "incident";
  const hardware = profileHardware(profile);
  const world = new SimWorld(hardware.gpus, Date.now, hardware.unified);
  if (profile === "incident") {
    // A notebook someone left running outside any unit: memory no unit explains (beside Kimi's GPUs).
    const notebook = world.spawn(["python3", "/home/alice/notebooks/probe-kv-cache.py"], null, 5);
    world.allocate(notebook.pid, world.gpus[11]!.uuid, 6_144);
  }

  const systemd = new SimSystemd(world, profileUnits(profile, world), opts.unitGlobs, timing);
  const gpu = new SimGpu(world, opts.gpuIntervalMs ?? 1000);
  const procs: ProcAdapter = {
    async inspect(pid) {
      const p = world.process(pid);
      if (!p || !world.isAlive(pid)) return { info: { pid, state: "gone", cmdline: p?.cmdline ?? [] }, unit: p?.unit ?? null };
      return { info: { pid, state: p.state, cmdline: p.cmdline, startedAtMs: p.startedAtMs }, unit: p.unit };
    },
    async meminfo() {
      return world.meminfo();
    },
    async killProcess(pid, startedAtMs) {
      const p = world.process(pid);
      if (!p || !world.isAlive(pid)) return { killed: false, reason: `process ${pid} is gone already` };
      if (Math.abs(p.startedAtMs - startedAtMs) > 10) return { killed: false, reason: `PID ${pid} is now a different process` };
      world.exit(pid, timing.stopDrainMs / timing.speed);
      return { killed: true };
    },
  };
  const engines = new SimEngineHttp(
    (name) => systemd.simUnit(name),
    (pid) => world.isAlive(pid),
  );
  const kernelLog = new SimKernelLog();
  systemd.kernelLines = () => kernelLog.recent;
  return { kind: "simulator", systemd, gpu, procs, world, kernelLog, engines };
}

/** The simulated kernel log: quiet unless a test (or a demo) injects a message. */
export class SimKernelLog implements KernelLogAdapter {
  private onMessage: ((m: KernelMessage) => void) | null = null;
  private seq = 0;
  /** the last 500 messages, as journal lines (journal searches with kernelPci read them) */
  readonly recent: JournalEntry[] = [];

  start(onMessage: (m: KernelMessage) => void): void {
    this.onMessage = onMessage;
  }

  inject(message: string, atMs = Date.now()): void {
    this.recent.push({ cursor: `s=4e7;i=${(++this.seq).toString(16)}`, atUsec: atMs * 1000, unit: "kernel", priority: 3, pid: null, message });
    if (this.recent.length > 500) this.recent.shift();
    this.onMessage?.({ atMs, message });
  }

  async close(): Promise<void> {
    this.onMessage = null;
  }
}

class SimGpu implements GpuAdapter {
  private timer: NodeJS.Timeout | null = null;
  private statusValue: BackendStatus = { state: "connecting", message: "starting simulated nvidia-smi", sinceMs: Date.now() };

  constructor(
    private world: SimWorld,
    private intervalMs: number,
  ) {}

  start(onSample: (s: GpuRawSample) => void, onStatus: (s: BackendStatus) => void): void {
    const tick = () => {
      const { gpus, apps } = this.world.readings();
      onSample({ atMs: Date.now(), gpus, apps });
      if (this.statusValue.state !== "ok") {
        this.statusValue = { state: "ok", message: `simulated nvidia-smi: ${gpus.length} GPUs`, sinceMs: Date.now() };
        onStatus(this.statusValue);
      }
    };
    tick();
    this.timer = setInterval(tick, this.intervalMs);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  status(): BackendStatus {
    return this.statusValue;
  }
}
