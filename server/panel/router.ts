/**
 * The panel's tRPC API, called by browsers. It mirrors the agent's procedure names, checks
 * who may do what, and forwards to the agent with the acting user attached. Subscriptions are
 * re-streamed: each browser stream opens one agent stream resuming from the same event id,
 * so the agent's ring buffer is the single source of truth for replay.
 */
import { TRPCClientError } from "@trpc/client";
import { tracked, TRPCError } from "@trpc/server";
import { z } from "zod";
import type { AgentEvent } from "../agent/hub";
import type { JournalEntry, UnitAction } from "../agent/types";
import { unitNameSchema } from "../agent/unitNames";
import { can, unitPermissions } from "../auth/authorize";
import { authedProcedure, router, type Actor } from "../trpc";
import type { AgentClient } from "./agentClient";

export interface PanelRouterDeps {
  agent: AgentClient;
  demo: boolean;
  /** Aborted on shutdown: open browser streams end with a retryable error. */
  shutdown: AbortSignal;
}

const actionInput = z
  .object({
    name: unitNameSchema,
    reason: z.string().trim().max(500, "reason is longer than 500 characters").optional(),
  })
  .strict();
const lastEventIdSchema = z.string().max(100).nullish();

/** Agent errors become panel errors with the same code and message. */
function relay(err: unknown): never {
  if (err instanceof TRPCError) throw err;
  if (err instanceof TRPCClientError) {
    const code = (err.data as { code?: TRPCError["code"] } | undefined)?.code;
    if (code) throw new TRPCError({ code, message: err.message });
    throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: `The agent could not be reached: ${err.message}` });
  }
  throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: (err as Error).message });
}

async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    relay(err);
  }
}

/** Bridge a client subscription into an async generator that ends when `signal` aborts. */
async function* bridge<T>(
  subscribe: (handlers: {
    onData: (d: { id: string; data: T }) => void;
    onError: (e: unknown) => void;
    onComplete: () => void;
  }) => { unsubscribe(): void },
  signal: AbortSignal,
): AsyncGenerator<{ id: string; data: T }> {
  const queue: { id: string; data: T }[] = [];
  let failure: unknown = null;
  let done = false;
  let wake: (() => void) | null = null;
  const sub = subscribe({
    onData: (d) => {
      queue.push(d);
      wake?.();
    },
    onError: (e) => {
      failure = e;
      wake?.();
    },
    onComplete: () => {
      done = true;
      wake?.();
    },
  });
  const onAbort = () => wake?.();
  signal.addEventListener("abort", onAbort);
  try {
    while (!signal.aborted) {
      if (queue.length > 0) {
        yield queue.shift()!;
        continue;
      }
      if (failure) relay(failure);
      if (done) throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: "the agent closed the stream" });
      await new Promise<void>((r) => (wake = r));
      wake = null;
    }
  } finally {
    sub.unsubscribe();
    signal.removeEventListener("abort", onAbort);
  }
}

function linked(a: AbortSignal | undefined, b: AbortSignal): AbortSignal {
  return a ? AbortSignal.any([a, b]) : b;
}

export function createPanelRouter(deps: PanelRouterDeps) {
  const { agent } = deps;
  const ctxFor = (actor: Actor) => ({ context: { actor } });

  function act(action: UnitAction, procedure: "start" | "stop" | "restart" | "resetFailed" | "kill") {
    return authedProcedure.input(actionInput).mutation(async ({ input, ctx }) => {
      const decision = can(ctx.actor, action, input.name);
      if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
      return call(() => agent.units[procedure].mutate(input, ctxFor(ctx.actor)));
    });
  }

  const session = router({
    me: authedProcedure.query(({ ctx }) => ({
      user: ctx.actor.user,
      role: ctx.actor.role,
      unitPatterns: ctx.actor.unitPatterns,
      demo: deps.demo,
    })),
  });

  const host = router({
    status: authedProcedure.query(({ ctx }) => call(() => agent.host.status.query(undefined, ctxFor(ctx.actor)))),
  });

  const units = router({
    list: authedProcedure.query(({ ctx }) => call(() => agent.units.list.query(undefined, ctxFor(ctx.actor)))),
    get: authedProcedure.input(z.object({ name: unitNameSchema }).strict()).query(async ({ input, ctx }) => {
      const detail = await call(() => agent.units.get.query(input, ctxFor(ctx.actor)));
      return { detail, permissions: unitPermissions(ctx.actor, input.name) };
    }),
    start: act("start", "start"),
    stop: act("stop", "stop"),
    restart: act("restart", "restart"),
    resetFailed: act("reset-failed", "resetFailed"),
    kill: act("kill", "kill"),
    diagnose: authedProcedure
      .input(z.object({ name: unitNameSchema }).strict())
      .query(({ input, ctx }) => call(() => agent.units.diagnose.query(input, ctxFor(ctx.actor)))),
    timeline: authedProcedure
      .input(z.object({ name: unitNameSchema, sinceMs: z.number().int().nonnegative().optional() }).strict())
      .query(({ input, ctx }) => call(() => agent.units.timeline.query(input, ctxFor(ctx.actor)))),
    journal: authedProcedure
      .input(z.object({ name: unitNameSchema, lines: z.number().int().min(1).max(2000).default(200) }).strict())
      .query(({ input, ctx }) => call(() => agent.units.journal.query(input, ctxFor(ctx.actor)))),
    followJournal: authedProcedure
      .input(z.object({ name: unitNameSchema, lastEventId: lastEventIdSchema }).strict())
      .subscription(async function* ({ input, ctx, signal }) {
        const stream = bridge<JournalEntry>(
          (h) => agent.units.followJournal.subscribe(input, { ...h, ...ctxFor(ctx.actor) }),
          linked(signal, deps.shutdown),
        );
        for await (const { id, data } of stream) yield tracked(id, data);
        if (deps.shutdown.aborted) throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: "panel is restarting" });
      }),
  });

  const gpus = router({
    list: authedProcedure.query(({ ctx }) => call(() => agent.gpus.list.query(undefined, ctxFor(ctx.actor)))),
    history: authedProcedure
      .input(z.object({ sinceMs: z.number().int().nonnegative(), uuid: z.string().max(100).optional() }).strict())
      .query(({ input, ctx }) => call(() => agent.gpus.history.query(input, ctxFor(ctx.actor)))),
  });

  const events = router({
    watch: authedProcedure
      .input(z.object({ lastEventId: lastEventIdSchema }).strict().optional())
      .subscription(async function* ({ input, ctx, signal }) {
        const stream = bridge<AgentEvent>(
          (h) => agent.events.watch.subscribe({ lastEventId: input?.lastEventId ?? null }, { ...h, ...ctxFor(ctx.actor) }),
          linked(signal, deps.shutdown),
        );
        for await (const { id, data } of stream) yield tracked(id, data);
        if (deps.shutdown.aborted) throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: "panel is restarting" });
      }),
  });

  return router({ session, host, units, gpus, events });
}

export type PanelRouter = ReturnType<typeof createPanelRouter>;
export { can };
