/** `gpus.list` and `gpus.history`, from the agent. */
import { gpuHistoryInput } from "../../contract/schemas";
import { router } from "../../trpc";
import { asActor, callAgent, signedInProcedure } from "../trpc";

export const gpusRouter = router({
  list: signedInProcedure.query(({ ctx }) => callAgent(ctx.services, () => ctx.services.agent.gpus.list.query(undefined, asActor(ctx.actor)))),
  history: signedInProcedure
    .input(gpuHistoryInput)
    .query(({ input, ctx }) => callAgent(ctx.services, () => ctx.services.agent.gpus.history.query(input, asActor(ctx.actor)))),
});
