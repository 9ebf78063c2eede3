/**
 * `events.watch`: a snapshot (or, with a known `lastEventId`, exactly the events missed), then
 * live events, until the client goes or the agent shuts down. A client too slow to keep up is
 * told to reconnect (it gets a snapshot then) rather than silently skipped over.
 */
import { tracked, TRPCError } from "@trpc/server";
import type { StoredEvent } from "../../contract/events";
import { watchInput } from "../../contract/schemas";
import { BoundedQueue, StreamOverflow } from "../../streams/boundedQueue";
import { linkSignals } from "../../streams/signals";
import { authedProcedure, router } from "../../trpc";
import type { Hub } from "../hub/hub";
import { shuttingDown, type AgentServices } from "./services";

/** Events a stream may fall behind by before it is cut. */
export const WATCH_QUEUE_LIMIT = 10_000;

export function createEventsRouter(services: AgentServices) {
  return router({
    watch: authedProcedure.input(watchInput).subscription(async function* ({ input, signal }) {
      const linked = linkSignals(signal, services.shutdown);
      try {
        yield* watchEvents(services.hub, input?.lastEventId ?? null, linked.signal);
      } finally {
        linked.dispose();
      }
      if (services.shutdown.aborted) throw shuttingDown();
    }),
  });
}

async function* watchEvents(hub: Hub, lastEventId: string | null, signal: AbortSignal) {
  const queue = new BoundedQueue<StoredEvent>(WATCH_QUEUE_LIMIT);
  const unsubscribe = hub.subscribe((e) => queue.push(e));
  try {
    const replay = hub.replayAfter(lastEventId);
    if (replay === null) {
      yield tracked(hub.currentEventId(), hub.snapshot());
      queue.clear(); // everything queued so far is in the snapshot's past
    } else {
      const seen = new Set(replay.map((e) => e.id));
      for (const e of replay) yield tracked(e.id, e.event);
      queue.drop((e) => seen.has(e.id));
    }
    for await (const e of queue.drain(signal)) yield tracked(e.id, e.event);
  } catch (err) {
    if (err instanceof StreamOverflow) throw new TRPCError({ code: "TOO_MANY_REQUESTS", message: "event stream fell behind; reconnect" });
    throw err;
  } finally {
    unsubscribe();
  }
}
