/** `gpus.list` (the latest attributed sample) and `gpus.history` (for the charts). */
import { gpuHistoryInput } from "../../contract/schemas";
import { authedProcedure, router } from "../../trpc";
import type { AgentServices } from "./services";

export function createGpusRouter({ hub }: AgentServices) {
  return router({
    list: authedProcedure.query(() => ({ sample: hub.gpuNow(), telemetry: hub.telemetryStatus() })),
    history: authedProcedure.input(gpuHistoryInput).query(({ input }) => hub.gpuHistory.since(input.sinceMs, input.uuid)),
  });
}
