/** `host.status`: one host's agent, as the agent reports it. */
import { hostInput } from "../../contract/schemas";
import { router } from "../../trpc";
import { asActor, callHost, signedInProcedure } from "../trpc";

export const hostRouter = router({
  status: signedInProcedure
    .input(hostInput)
    .query(({ input, ctx }) => callHost(ctx.services, input.host, (agent) => agent.host.status.query(undefined, asActor(ctx.actor)))),
});
