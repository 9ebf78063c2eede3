/**
 * The parts of the agent that sit beside the hub and watch its stream: GPU-aware operations,
 * the crash-loop monitor and the GPU fault log. One set per hub: main.ts creates them with the
 * agent's configuration (and starts reading the kernel log); a router built without them (tests)
 * gets a default set on first use.
 */
import { CrashLoopMonitor } from "./crashLoop/monitor";
import { DEFAULT_CRASH_LOOP_RULE, type CrashLoopRule } from "./crashLoop/rule";
import { FaultLog } from "./faults/faultLog";
import type { Hub } from "./hub/hub";
import { OperationRunner, type OperationRunnerOptions } from "./operations/runner";

export interface AgentParts {
  operations: OperationRunner;
  crashLoops: CrashLoopMonitor;
  faults: FaultLog;
}

export interface AgentPartsOptions {
  crashLoopRule?: CrashLoopRule;
  operations?: OperationRunnerOptions;
}

const byHub = new WeakMap<Hub, AgentParts>();

export function createAgentParts(hub: Hub, opts: AgentPartsOptions = {}): AgentParts {
  const existing = byHub.get(hub);
  if (existing) return existing;
  const parts: AgentParts = {
    operations: new OperationRunner(hub, opts.operations),
    crashLoops: new CrashLoopMonitor(hub, opts.crashLoopRule ?? DEFAULT_CRASH_LOOP_RULE),
    faults: new FaultLog(hub),
  };
  byHub.set(hub, parts);
  return parts;
}

/** The hub's parts (created with defaults if main.ts did not). */
export function agentParts(hub: Hub): AgentParts {
  return byHub.get(hub) ?? createAgentParts(hub);
}

export async function closeAgentParts(hub: Hub): Promise<void> {
  const parts = byHub.get(hub);
  if (!parts) return;
  parts.operations.close();
  parts.crashLoops.close();
  await parts.faults.close();
  byHub.delete(hub);
}
