/** `gpus.list` and `gpus.history` of one host, from its agent. */
import { hostGpuHistoryInput, hostInput } from "../../contract/schemas";
import { router } from "../../trpc";
import { asActor, callHost, expensiveQueryProcedure, signedInProcedure } from "../trpc";
import { gpuFaultProcedures } from "./gpuCareProcedures";

export const gpusRouter = router({
  list: signedInProcedure
    .input(hostInput)
    .query(({ input, ctx }) => callHost(ctx.services, input.host, (agent) => agent.gpus.list.query(undefined, asActor(ctx.actor)))),
  history: expensiveQueryProcedure
    .input(hostGpuHistoryInput)
    .query(({ input: { host, ...input }, ctx }) => callHost(ctx.services, host, (agent) => agent.gpus.history.query(input, asActor(ctx.actor)))),
  // gpus.faults, gpus.killHolder
  ...gpuFaultProcedures,
});
