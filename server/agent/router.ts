/**
 * The agent's tRPC API. Procedure names are a contract other tools use:
 *   host.status, units.list, units.get, units.start|stop|restart|resetFailed|kill,
 *   units.timeline, units.journal, units.followJournal (subscription),
 *   gpus.list, gpus.history, events.watch (subscription).
 */
import { tracked, TRPCError } from "@trpc/server";
import { authedProcedure, router } from "../trpc";
import { diagnose } from "../diagnosis/diagnose";
import { readDependencyStates } from "../diagnosis/dependencies";
import type { DiagnosisFacts } from "../diagnosis/types";
import type { AgentEvent } from "../contract/events";
import type { Hub } from "./hub";
import type { UnitAction } from "../contract/types";
import { followJournalInput, gpuHistoryInput, journalInput, timelineInput, unitActionInput, unitInput, watchInput } from "../contract/schemas";
import { matchesUnitGlobs } from "../contract/unitNames";

export interface AgentRouterDeps {
  hub: Hub;
  unitGlobs: string[];
  /** Resolves when the agent shuts down: open subscriptions end with a retryable error. */
  shutdown: AbortSignal;
}

export function createAgentRouter(deps: AgentRouterDeps) {
  const { hub, unitGlobs } = deps;

  /** Refuse anything outside the allow-list before the adapter sees it. */
  function allowed(name: string): string {
    if (unitGlobs.length === 0) {
      throw new TRPCError({
        code: "FORBIDDEN",
        message: "This agent controls no units: set GPUDECK_UNITS (e.g. GPUDECK_UNITS='vllm-*.service').",
      });
    }
    if (!matchesUnitGlobs(name, unitGlobs)) {
      throw new TRPCError({
        code: "FORBIDDEN",
        message: `Unit ${name} is not in this agent's allow-list (GPUDECK_UNITS=${unitGlobs.join(",")}).`,
      });
    }
    return name;
  }

  function act(action: UnitAction) {
    return authedProcedure.input(unitActionInput).mutation(async ({ input, ctx }) => {
      const name = allowed(input.name);
      const base = {
        unit: name,
        action,
        user: ctx.actor.user,
        role: ctx.actor.role,
        sourceAddr: ctx.actor.sourceAddr ?? ctx.sourceAddr ?? null,
        reason: input.reason || null,
      };
      if (hub.systemdStatus().state !== "ok") {
        const message = `systemd is unreachable: ${hub.systemdStatus().message}`;
        hub.recordAction(base, { error: message });
        throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message });
      }
      try {
        const { jobId } = await hub.host.systemd.act(name, action);
        const record = hub.recordAction(base, { jobId });
        return { jobId, actionId: record.id };
      } catch (err) {
        const message = (err as Error).message;
        hub.recordAction(base, { error: message });
        throw new TRPCError({ code: "BAD_REQUEST", message });
      }
    });
  }

  const host = router({
    status: authedProcedure.query(() => ({
      bootId: hub.bootId,
      host: hub.hostname,
      simulated: hub.host.kind === "simulator",
      unitGlobs,
      systemd: hub.systemdStatus(),
      telemetry: hub.telemetryStatus(),
    })),
  });

  const units = router({
    list: authedProcedure.query(() => ({ units: hub.units(), systemd: hub.systemdStatus() })),
    get: authedProcedure.input(unitInput).query(async ({ input }) => {
      const name = allowed(input.name);
      const detail = await hub.host.systemd.get(name);
      if (!detail) throw new TRPCError({ code: "NOT_FOUND", message: `Unit ${name} is not known to systemd on ${hub.hostname}.` });
      return detail;
    }),
    start: act("start"),
    stop: act("stop"),
    restart: act("restart"),
    resetFailed: act("reset-failed"),
    kill: act("kill"),
    /** "Why won't it start?": the diagnosis engine over what the agent knows right now. */
    diagnose: authedProcedure.input(unitInput).query(async ({ input }) => {
      const name = allowed(input.name);
      const nowMs = Date.now();
      const [unit, journal] = await Promise.all([hub.host.systemd.get(name), hub.host.systemd.journal(name, 50).catch(() => [])]);
      const facts: DiagnosisFacts = {
        nowMs,
        unit,
        requestedName: name,
        recentTransitions: hub.timeline(name).transitions.slice(-50),
        gpuNow: hub.gpuNow(),
        gpuRecent: hub.gpuRecent(nowMs - 60_000),
        journal,
        job: unit?.job ?? null,
        recentJobs: hub.recentJobs(name),
      };
      const diagnosis = diagnose(facts);
      // Only "dependency-failed" uses the required units' state: read it (bus calls, read-only,
      // also for units outside the allow-list) only then, and let the engine name the failed one.
      if (diagnosis.code !== "dependency-failed" || !unit) return diagnosis;
      const dependencies = await readDependencyStates(unit, hub.host.systemd, unitGlobs);
      return dependencies ? diagnose({ ...facts, dependencies }) : diagnosis;
    }),
    timeline: authedProcedure.input(timelineInput).query(({ input }) => hub.timeline(allowed(input.name), (input.sinceMs ?? 0) * 1000)),
    journal: authedProcedure.input(journalInput).query(({ input }) => hub.host.systemd.journal(allowed(input.name), input.lines)),
    followJournal: authedProcedure.input(followJournalInput).subscription(async function* ({ input, signal }) {
      const name = allowed(input.name);
      const abort = linkedAbort(signal, deps.shutdown);
      try {
        for await (const entry of hub.host.systemd.followJournal(name, abort.signal, { afterCursor: input.lastEventId ?? undefined })) {
          yield tracked(entry.cursor, entry);
        }
      } finally {
        abort.dispose();
      }
      if (deps.shutdown.aborted) throw shuttingDown();
    }),
  });

  const gpus = router({
    list: authedProcedure.query(() => ({ sample: hub.gpuNow(), telemetry: hub.telemetryStatus() })),
    history: authedProcedure.input(gpuHistoryInput).query(({ input }) => hub.gpuHistory.since(input.sinceMs, input.uuid)),
  });

  const events = router({
    watch: authedProcedure.input(watchInput).subscription(async function* ({ input, signal }) {
      const abort = linkedAbort(signal, deps.shutdown);
      try {
        yield* watchEvents(hub, input?.lastEventId ?? null, abort.signal);
      } finally {
        abort.dispose();
      }
      if (deps.shutdown.aborted) throw shuttingDown();
    }),
  });

  return router({ host, units, gpus, events });
}

export type AgentRouter = ReturnType<typeof createAgentRouter>;

/** A snapshot (or a replay after lastEventId), then live events, until aborted. */
async function* watchEvents(hub: Hub, lastEventId: string | null, signal: AbortSignal) {
  const queue: { id: string; event: AgentEvent }[] = [];
  let overflow = false;
  let wake: (() => void) | null = null;
  const unsubscribe = hub.subscribe((e) => {
    if (queue.length >= 10_000) overflow = true;
    else queue.push(e);
    wake?.();
  });
  const onAbort = () => wake?.();
  signal.addEventListener("abort", onAbort);
  try {
    const replay = hub.replayAfter(lastEventId);
    if (replay === null) {
      yield tracked(hub.currentEventId(), hub.snapshot());
      queue.length = 0; // everything queued so far is in the snapshot's past
    } else {
      const seen = new Set(replay.map((e) => e.id));
      for (const e of replay) yield tracked(e.id, e.event);
      for (let i = queue.length - 1; i >= 0; i--) if (seen.has(queue[i]!.id)) queue.splice(i, 1);
    }
    while (!signal.aborted) {
      if (overflow) {
        // a client this slow gets a clean restart from a snapshot rather than a silent gap
        throw new TRPCError({ code: "TOO_MANY_REQUESTS", message: "event stream fell behind; reconnect" });
      }
      if (queue.length === 0) {
        await new Promise<void>((r) => (wake = r));
        wake = null;
        continue;
      }
      const e = queue.shift()!;
      yield tracked(e.id, e.event);
    }
  } finally {
    unsubscribe();
    signal.removeEventListener("abort", onAbort);
  }
}

/**
 * A signal that aborts when any of `signals` does. `dispose` must run when the stream ends:
 * the agent's shutdown signal lives as long as the agent, and a listener left on it per
 * stream would pile up with every browser reconnect.
 */
export function linkedAbort(...signals: (AbortSignal | undefined)[]): { signal: AbortSignal; dispose(): void } {
  const ctl = new AbortController();
  const onAbort = () => ctl.abort();
  const attached: AbortSignal[] = [];
  for (const s of signals) {
    if (!s) continue;
    if (s.aborted) ctl.abort();
    else {
      s.addEventListener("abort", onAbort, { once: true });
      attached.push(s);
    }
  }
  return {
    signal: ctl.signal,
    dispose: () => {
      for (const s of attached) s.removeEventListener("abort", onAbort);
    },
  };
}

function shuttingDown(): TRPCError {
  // A retryable error: a plain return would tell the client to stop for good.
  return new TRPCError({ code: "SERVICE_UNAVAILABLE", message: "agent is shutting down" });
}
