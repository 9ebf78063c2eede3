/**
 * `events.watch`: the agent's live events for a browser, resumable by event id. Each browser
 * stream re-streams one agent stream from the same id, so the agent's ring is the single source
 * of truth for replay.
 */
import { tracked } from "@trpc/server";
import type { AgentEvent } from "../../contract/events";
import { watchInput } from "../../contract/schemas";
import { router } from "../../trpc";
import { agentStream } from "../agentStream";
import { asActor, sessionBoundStream, signedInProcedure } from "../trpc";

export const eventsRouter = router({
  watch: signedInProcedure.input(watchInput).subscription(async function* ({ input, ctx, signal }) {
    const bound = sessionBoundStream(ctx, signal);
    try {
      const stream = agentStream<AgentEvent>(
        (h) => ctx.services.agent.events.watch.subscribe({ lastEventId: input?.lastEventId ?? null }, { ...h, ...asActor(ctx.actor) }),
        bound.signal,
        ctx.services.agentErrors,
      );
      for await (const { id, data } of stream) yield tracked(id, data);
      bound.throwIfEnded();
    } finally {
      bound.dispose();
    }
  }),
});
