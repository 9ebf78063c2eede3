/**
 * The processes of a unit for its detail page, from /proc: the control process (e.g. a running
 * ExecStartPre), the main process, and everything in the unit's cgroup.
 */
import type { ProcessInfo, UnitSummary } from "../../contract/types";
import type { ProcAdapter } from "../adapter";
import { cgroupPids } from "./cgroups";
import type { ProcessFacts } from "./unitProps";

/** A unit's cgroup lists at most this many processes. */
const MAX_CGROUP_PROCESSES = 256;

export class UnitProcessReader {
  constructor(
    /** null: no /proc reader, so no process facts */
    private readonly procs: ProcAdapter | null,
    /** cgroup hierarchy root systemd's ControlGroup paths are relative to; null: unknown */
    private readonly cgroupRoot: string | null,
  ) {}

  async read(summary: UnitSummary, controlGroup: string): Promise<ProcessFacts> {
    const [controlProcess, mainProcess, processes] = await Promise.all([
      this.inspect(summary.controlPid),
      this.inspect(summary.mainPid),
      this.cgroupProcesses(controlGroup),
    ]);
    return { controlProcess, mainProcess, processes };
  }

  private async inspect(pid: number): Promise<ProcessInfo | null> {
    if (!this.procs || !Number.isInteger(pid) || pid <= 0) return null;
    const { info } = await this.procs.inspect(pid);
    return info.state === "gone" ? null : info;
  }

  private async cgroupProcesses(controlGroup: string): Promise<ProcessInfo[]> {
    if (!this.procs || !this.cgroupRoot || !controlGroup) return [];
    const pids = await cgroupPids(this.cgroupRoot, controlGroup, MAX_CGROUP_PROCESSES);
    const infos = await Promise.all(pids.map((pid) => this.inspect(pid)));
    return infos.filter((p): p is ProcessInfo => p !== null);
  }
}
