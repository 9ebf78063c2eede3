/**
 * `units.start|restart({ waitForGpus: true, timeoutMs? })`: instead of queueing a job, begin a
 * GPU-aware operation (../operations/runner.ts) and return at once with
 * `{ operationId, jobId: null, actionId: null, operation }` — the operation's steps follow as
 * `operation` events and from `operations.get`. A refusal before the stop (a foreign process on
 * the unit's GPUs) is not an error: the operation comes back already `failed`, with `foreign`
 * naming the processes. Failures before an operation exists are recorded like a plain action's.
 */
import { TRPCError } from "@trpc/server";
import type { Operation } from "../../contract/operations";
import type { UnitAction } from "../../contract/types";
import { agentParts } from "../agentParts";
import type { ActionInput } from "../hub/actionLog";
import { toTrpcError } from "./operationsRouter";
import type { AgentServices } from "./services";

export interface GpuAwareResult {
  operationId: string;
  jobId: null;
  actionId: null;
  operation: Operation;
}

/** Checks that only start/restart ask for it, and that timeoutMs comes with it. */
export function gpuAwareRequested(action: UnitAction, input: { waitForGpus?: boolean; timeoutMs?: number }): boolean {
  if (input.timeoutMs !== undefined && input.waitForGpus !== true) {
    throw new TRPCError({ code: "BAD_REQUEST", message: "timeoutMs applies only with waitForGpus: true." });
  }
  if (input.waitForGpus !== true) return false;
  if (action !== "start" && action !== "restart") {
    throw new TRPCError({ code: "BAD_REQUEST", message: `waitForGpus applies to start and restart only, not ${action}.` });
  }
  return true;
}

export async function beginGpuAwareAction(
  services: AgentServices,
  action: "start" | "restart",
  base: ActionInput,
  timeoutMs: number | undefined,
): Promise<GpuAwareResult> {
  try {
    const operation = await agentParts(services.hub).operations.begin({
      unit: base.unit,
      kind: action,
      timeoutMs,
      user: base.user,
      role: base.role,
      sourceAddr: base.sourceAddr,
      reason: base.reason,
    });
    return { operationId: operation.id, jobId: null, actionId: null, operation };
  } catch (err) {
    services.hub.recordAction(base, { error: (err as Error).message });
    const mapped = toTrpcError(err);
    throw mapped instanceof TRPCError ? mapped : new TRPCError({ code: "BAD_REQUEST", message: (err as Error).message });
  }
}
