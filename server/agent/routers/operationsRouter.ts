/**
 * `operations.*`: GPU-aware starts/restarts (`units.restart|start` with `waitForGpus: true`
 * create them): `get({ id })`, `list({ unit? })` (newest first, in memory, the last 200 ended
 * plus the running ones), `cancel({ id })` (while stopping or waiting; CONFLICT once the start
 * job is queued). Reads are open to any caller; cancel is checked like the action at the panel.
 */
import { TRPCError } from "@trpc/server";
import { operationInput, operationListInput } from "../../contract/operationSchemas";
import { authedProcedure, router } from "../../trpc";
import { agentParts } from "../agentParts";
import { OperationError } from "../operations/runner";
import { allowedUnit, type AgentServices } from "./services";

export function toTrpcError(err: unknown): unknown {
  if (!(err instanceof OperationError)) return err;
  return new TRPCError({ code: err.code, message: err.message, cause: err });
}

export function createOperationsRouter(services: AgentServices) {
  const runner = () => agentParts(services.hub).operations;
  return router({
    get: authedProcedure.input(operationInput).query(({ input }) => {
      const op = runner().get(input.id);
      if (!op)
        throw new TRPCError({
          code: "NOT_FOUND",
          message: `There is no operation ${input.id} on ${services.hub.hostname} (operations are kept in memory: an agent restart forgets them).`,
        });
      return op;
    }),
    list: authedProcedure.input(operationListInput).query(({ input }) => {
      if (input?.unit) allowedUnit(services, input.unit);
      return runner().list(input?.unit);
    }),
    cancel: authedProcedure.input(operationInput).mutation(({ input, ctx }) => {
      try {
        return runner().cancel(input.id, ctx.actor.user);
      } catch (err) {
        throw toTrpcError(err);
      }
    }),
  });
}
