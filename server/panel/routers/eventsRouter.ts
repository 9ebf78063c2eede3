/**
 * `events.watch`: live events for a browser, from the panel's fleet hub (one agent stream per
 * host, fanned out), for what the page shows: `{ watch: "fleet" }`, `{ watch: "host", host }` or
 * `{ watch: "unit", host, name }`, resumable by event id (see contract/fleet.ts).
 */
import { tracked } from "@trpc/server";
import type { WatchScope } from "../../contract/fleet";
import { panelWatchInput } from "../../contract/schemas";
import { router } from "../../trpc";
import { viewRightsOf, viewStreamData } from "../roleViews";
import { hostLink, sessionBoundStream, signedInProcedure } from "../trpc";

export const eventsRouter = router({
  watch: signedInProcedure.input(panelWatchInput).subscription(async function* ({ input, ctx, signal }) {
    const { lastEventId, ...scope } = input;
    if (scope.watch !== "fleet") hostLink(ctx.services, scope.host); // NOT_FOUND before the stream starts
    const bound = sessionBoundStream(ctx, signal);
    // log lines and hosts' connection errors only for those who may see them (../roleViews.ts)
    const rights = viewRightsOf(ctx.actor, ctx.services.auth);
    try {
      for await (const item of ctx.services.fleet.watch(scope as WatchScope, lastEventId ?? null, bound.signal))
        yield tracked(item.id, viewStreamData(item.data, rights));
      bound.throwIfEnded();
    } finally {
      bound.dispose();
    }
  }),
});
