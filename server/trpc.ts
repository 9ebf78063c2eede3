/**
 * The one initTRPC of gpudeck. The agent and the panel each build their root router from
 * small per-area routers made with these builders; their context differs only in how the
 * actor was established (agent: bearer token + forwarded actor; panel: session cookie).
 */
import { initTRPC, TRPCError } from "@trpc/server";
import { ZodError } from "zod";
import type { Actor } from "./contract/actors";
import { zodIssuesMessage } from "./contract/errors";
import { redactOutput } from "./contract/redact";
import { agentErrorForRole } from "./contract/roleViews";
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
  errorFormatter({ shape, error, ctx }) {
    // Zod messages are written for people: surface the first one as the error message.
    const zodError = error.cause instanceof ZodError ? error.cause : null;
    return {
      ...shape,
      // a panel error naming an agent's URL and token file goes to admins only (contract/roleViews.ts)
      message: zodError ? zodIssuesMessage(zodError) : agentErrorForRole(shape.message, ctx?.actor?.role ?? null),
      data: { ...shape.data, stack: undefined },
    };
  },
});

export const router = t.router;
export const mergeRouters = t.mergeRouters;
export const publicProcedure = t.procedure;
export const createCallerFactory = t.createCallerFactory;

const authenticated = t.procedure.use(({ ctx, next }) => {
  if (!ctx.actor) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in first." });
  return next({ ctx: { ...ctx, actor: ctx.actor } });
});

/**
 * Any authenticated caller (the agent's procedures). Whatever it returns, streams included, leaves
 * with secrets in command lines, environment assignments, URLs and log lines masked
 * (contract/redact.ts), for every role: the panel shows them to viewers and status pages.
 */
export const authedProcedure = authenticated.use(async ({ next }) => {
  const result = await next();
  return result.ok ? { ...result, data: redactOutput(result.data) } : result;
});

/** The same without redaction: only for revealing a unit's command lines (admins, audited by the panel). */
export const unredactedProcedure = authenticated;
