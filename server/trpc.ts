/**
 * The one initTRPC of gpudeck. The agent and the panel each build their root router from
 * small per-area routers made with these builders; their context differs only in how the
 * actor was established (agent: bearer token + forwarded actor; panel: session cookie).
 */
import { initTRPC, TRPCError } from "@trpc/server";
import { ZodError } from "zod";
import type { Actor } from "./contract/actors";
import { zodIssuesMessage } from "./contract/errors";
import { wireTransformer } from "./contract/wire";

export interface Context {
  /** null = not authenticated */
  actor: Actor | null;
  sourceAddr?: string;
}

const t = initTRPC.context<Context>().create({
  // values are sent as JSON; live events may be serialized once for every stream (contract/wire.ts)
  transformer: wireTransformer,
  sse: {
    // Pings keep proxies from closing idle streams and let clients notice a dead server.
    ping: { enabled: true, intervalMs: 10_000 },
    client: { reconnectAfterInactivityMs: 25_000 },
  },
  errorFormatter({ shape, error }) {
    // Zod messages are written for people: surface the first one as the error message.
    const zodError = error.cause instanceof ZodError ? error.cause : null;
    return {
      ...shape,
      message: zodError ? zodIssuesMessage(zodError) : shape.message,
      data: { ...shape.data, stack: undefined },
    };
  },
});

export const router = t.router;
export const mergeRouters = t.mergeRouters;
export const publicProcedure = t.procedure;
export const createCallerFactory = t.createCallerFactory;

/** Any authenticated caller. */
export const authedProcedure = t.procedure.use(({ ctx, next }) => {
  if (!ctx.actor) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in first." });
  return next({ ctx: { ...ctx, actor: ctx.actor } });
});
