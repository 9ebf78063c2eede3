/**
 * `events.watch`: live events for a browser, from the panel's fleet hub (one agent stream per
 * host, fanned out), for what the page shows: `{ watch: "fleet" }`, `{ watch: "host", host }` or
 * `{ watch: "unit", host, name }`, resumable by event id (see contract/fleet.ts). What it carries
 * is what the caller's role may see (../roleViews.ts); when their role changes so that this
 * differs, the stream ends (a plain end: the browser reconnects with the new view).
 */
import { tracked } from "@trpc/server";
import type { WatchScope } from "../../contract/fleet";
import { panelWatchInput } from "../../contract/schemas";
import { router } from "../../trpc";
import { sameRights, viewRightsOf, viewStreamData } from "../roleViews";
import { hostLink, sessionBoundStream, signedInProcedure } from "../trpc";
import { acceptsPush, PushFeed } from "../pushFeed";

export const eventsRouter = router({
  watch: signedInProcedure.input(panelWatchInput).subscription(async function* ({ input, ctx, signal }) {
    const { lastEventId, ...scope } = input;
    if (scope.watch !== "fleet") hostLink(ctx.services, scope.host); // NOT_FOUND before the stream starts
    // log lines and hosts' connection errors only for those who may see them (../roleViews.ts)
    const rights = viewRightsOf(ctx.actor, ctx.services.auth);
    // a change of the caller's role (on any replica) that changes what they may see ends the
    // stream without an error: the browser reconnects at once and gets the view of its new role
    let rightsChanged = false;
    const bound = sessionBoundStream(ctx, signal, (subject) => {
      if (sameRights(viewRightsOf(subject, ctx.services.auth), rights)) return { allowed: true };
      rightsChanged = true;
      return { allowed: false, reason: "what this stream may show changed with your role" };
    });
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
      if (rightsChanged) return;
      bound.throwIfEnded();
    } finally {
      bound.dispose();
    }
  }),
});
