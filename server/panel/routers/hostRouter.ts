/** `host.status`: the agent's host, as the agent reports it. */
import { router } from "../../trpc";
import { asActor, callAgent, signedInProcedure } from "../trpc";

export const hostRouter = router({
  status: signedInProcedure.query(({ ctx }) => callAgent(ctx.services, () => ctx.services.agent.host.status.query(undefined, asActor(ctx.actor)))),
});
