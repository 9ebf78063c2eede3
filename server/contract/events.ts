/**
 * The agent's event stream as the panel and the UI receive it (`events.watch`), and the record
 * of an action someone took. Part of the contract: imports nothing else of the project.
 */
import type { BackendStatus, GpuSample, JobEvent, UnitAction, UnitSummary, UnitTransition } from "./types";
import type { GpuFault } from "./faults";
import type { Operation } from "./operations";
import type { Readiness } from "./readiness";

export interface ActionRecord {
  id: string;
  atMs: number;
  unit: string;
  action: UnitAction;
  user: string;
  role: string;
  sourceAddr: string | null;
  reason: string | null;
  jobId: number | null;
  /** job result once known ("done", "failed", "canceled" …), or "error" when systemd refused */
  outcome: string | null;
  error: string | null;
}

export type AgentEvent =
  | {
      kind: "snapshot";
      bootId: string;
      /** the agent's version (package.json) */
      agentVersion: string;
      host: string;
      simulated: boolean;
      units: UnitSummary[];
      systemd: BackendStatus;
      telemetry: BackendStatus;
      gpu: GpuSample | null;
      atMs: number;
    }
  | { kind: "unit"; unit: UnitSummary }
  | { kind: "unit-removed"; name: string }
  | { kind: "transition"; transition: UnitTransition }
  | { kind: "job"; job: JobEvent }
  | { kind: "action"; action: ActionRecord }
  | { kind: "gpu"; sample: GpuSample }
  | { kind: "status"; systemd: BackendStatus; telemetry: BackendStatus }
  /** a GPU-aware start/restart entered a step or reported progress (./operations.ts) */
  | { kind: "operation"; operation: Operation }
  /** an Xid from the kernel log (./faults.ts) */
  | { kind: "fault"; fault: GpuFault }
  /** the unit's readiness changed (state, stage, progress, probe outcome, models; ./readiness.ts) */
  | { kind: "readiness"; unit: string; readiness: Readiness };

export interface StoredEvent {
  id: string;
  event: AgentEvent;
}
