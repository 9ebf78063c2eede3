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
import { acceptsPush, PushFeed } from "../pushFeed";

export const eventsRouter = router({
  watch: signedInProcedure.input(panelWatchInput).subscription(async function* ({ input, ctx, signal }) {
    const { lastEventId, ...scope } = input;
    if (scope.watch !== "fleet") hostLink(ctx.services, scope.host); // NOT_FOUND before the stream starts
    const bound = sessionBoundStream(ctx, signal);
    // log lines and hosts' connection errors only for those who may see them (../roleViews.ts)
    const rights = viewRightsOf(ctx.actor, ctx.services.auth);
    try {
      if (acceptsPush(ctx)) {
        // the panel's SSE writer: the hub pushes each shared frame to this viewer's socket (../sseWriter.ts)
        const fleet = ctx.services.fleet;
        yield new PushFeed((push) => {
          const sub = fleet.subscribe(scope as WatchScope, lastEventId ?? null, (item) => push(item.id, viewStreamData(item.data, rights)));
          return {
            resync: () => {
              const item = sub.resync();
              return { id: item.id, data: viewStreamData(item.data, rights) };
            },
            close: () => sub.close(),
          };
        }, bound.signal) as never;
      } else {
        for await (const item of ctx.services.fleet.watch(scope as WatchScope, lastEventId ?? null, bound.signal))
          yield tracked(item.id, viewStreamData(item.data, rights));
      }
      bound.throwIfEnded();
    } finally {
      bound.dispose();
    }
  }),
});
