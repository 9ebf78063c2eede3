/**
 * `gpus.list` (the latest attributed sample, with the unified-memory pool when there is one),
 * `gpus.history` (for the charts), `gpus.faults` (Xids from the kernel log) and
 * `gpus.killHolder` (admin: SIGKILL a process holding memory on a unit's GPUs, ./killHolder.ts).
 */
import { gpuHistoryReply } from "../gpuHistoryReply";
import { faultsInput, killHolderInput } from "../../contract/operationSchemas";
import { gpuHistoryInput } from "../../contract/schemas";
import { authedProcedure, router } from "../../trpc";
import { agentParts } from "../agentParts";
import { killHolder } from "./killHolder";
import type { AgentServices } from "./services";

export function createGpusRouter(services: AgentServices) {
  const { hub } = services;
  return router({
    list: authedProcedure.query(() => ({ sample: hub.gpuNow(), telemetry: hub.telemetryStatus() })),
    history: authedProcedure.input(gpuHistoryInput).query(({ input }) => gpuHistoryReply(hub.gpuHistory, input)),
    faults: authedProcedure.input(faultsInput).query(({ input }) => agentParts(hub).faults.list({ sinceMs: input?.sinceMs, unit: input?.unit })),
    killHolder: authedProcedure.input(killHolderInput).mutation(({ input, ctx }) => killHolder(services, input, ctx.actor)),
  });
}
