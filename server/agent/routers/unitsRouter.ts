/**
 * `units.*`: the allow-listed units, their detail, timeline, journal and diagnosis, and the
 * actions. An action queues a systemd job and returns its id at once; it never waits for the
 * job. Every action, refused ones included, is recorded with who asked and why.
 */
import { tracked, TRPCError } from "@trpc/server";
import { engineHistoryInput, followJournalInput, timelineInput, unitActionInput, unitInput } from "../../contract/schemas";
import type { UnitAction } from "../../contract/types";
import { linkSignals } from "../../streams/signals";
import { authedProcedure, router } from "../../trpc";
import { diagnoseUnit } from "../diagnoseUnit";
import { BriefCache } from "../journalReads";
import { JournalStreamError, sharedJournalsFor } from "../journalShare";
import { stopLoopInput } from "../../contract/operationSchemas";
import { agentParts } from "../agentParts";
import { readinessOf } from "../readiness/index";
import { stopLoop } from "../crashLoop/stopLoop";
import { beginGpuAwareAction, gpuAwareRequested } from "./gpuAwareAction";
import { gpuHistoryReply } from "../gpuHistoryReply";
import { allowedUnit, shuttingDown, type AgentServices } from "./services";
import { journalProcedures } from "./journalProcedures";

export function createUnitsRouter(services: AgentServices) {
  const { hub, unitGlobs } = services;
  const allowed = (name: string) => allowedUnit(services, name);
  // each reads the journal: asked by many viewers, or in a loop, one read per unit every few seconds
  const diagnoses = new BriefCache<Awaited<ReturnType<typeof diagnoseUnit>>>();
  // keyed by the unit's state, the latest action and its latest job too: a unit that changed, or a
  // start systemd refused (no state change, but a new answer), gets a fresh answer at once
  const cacheKey = (name: string) =>
    `${name}\u0000${JSON.stringify(hub.unit(name) ?? null)}\u0000${hub.recentActions(1)[0]?.id ?? ""}\u0000${JSON.stringify(hub.recentJobs(name, 1))}`;
  const crashLoopReports = new BriefCache<Awaited<ReturnType<ReturnType<typeof agentParts>["crashLoops"]["report"]>>>();

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
      // "when its GPUs are free": an operation (./gpuAwareAction.ts), not a job
      if (gpuAwareRequested(action, input)) return beginGpuAwareAction(services, action as "start" | "restart", base, input.timeoutMs);
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

  return router({
    list: authedProcedure.query(() => ({ units: hub.units(), systemd: hub.systemdStatus() })),
    get: authedProcedure.input(unitInput).query(async ({ input }) => {
      const name = allowed(input.name);
      const detail = await hub.host.systemd.get(name);
      if (!detail) throw new TRPCError({ code: "NOT_FOUND", message: `Unit ${name} is not known to systemd on ${hub.hostname}.` });
      const readiness = readinessOf(hub);
      return readiness ? { ...detail, readiness: readiness.readiness(name), engine: readiness.engineMetrics(name) } : detail;
    }),
    start: act("start"),
    stop: act("stop"),
    restart: act("restart"),
    resetFailed: act("reset-failed"),
    kill: act("kill"),
    /** "Why won't it start?": the diagnosis engine over what the agent knows right now. */
    diagnose: authedProcedure.input(unitInput).query(({ input }) => {
      const name = allowed(input.name);
      return diagnoses.get(cacheKey(name), () => diagnoseUnit(hub, name, unitGlobs));
    }),
    /** transitions, actions and unobserved spans; plus GPU faults (markers) and GPU-aware operations of the unit */
    timeline: authedProcedure.input(timelineInput).query(({ input }) => {
      const name = allowed(input.name);
      const parts = agentParts(hub);
      const sinceMs = input.sinceMs ?? 0;
      const gpu = input.points ? { gpu: gpuHistoryReply(hub.gpuHistory, { sinceMs, untilMs: input.untilMs, points: input.points }) } : {};
      return {
        ...hub.timeline(name, sinceMs * 1000),
        ...gpu,
        faults: parts.faults.list({ sinceMs, unit: name }),
        operations: parts.operations.list(name).filter((o) => o.atMs >= sinceMs),
        /** the readiness lane: state and stage changes (serving, loading weights …) */
        readiness: readinessOf(hub)?.timeline(name, sinceMs) ?? [],
      };
    }),
    /** The engine's load and latency (TTFT/ITL p50/p95, running, waiting, KV cache, tokens/s) over time; [] without readiness or engine metrics. */
    engineHistory: authedProcedure.input(engineHistoryInput).query(({ input }) => {
      const name = allowed(input.name);
      return readinessOf(hub)?.engineHistory(name, input.sinceMs, input.points) ?? [];
    }),
    /** Whether the unit restarts in a loop (GPUDECK_CRASH_LOOP), with the evidence: restart times, exits, last log line. */
    crashLoop: authedProcedure.input(unitInput).query(({ input }) => {
      const name = allowed(input.name);
      return crashLoopReports.get(cacheKey(name), () => agentParts(hub).crashLoops.report(name));
    }),
    /** "Stop the loop": stop, then reset-failed once stopped; returns at once with the stop job and the evidence. */
    stopLoop: authedProcedure.input(stopLoopInput).mutation(async ({ input, ctx }) => {
      const name = allowed(input.name);
      const base = {
        unit: name,
        user: ctx.actor.user,
        role: ctx.actor.role,
        sourceAddr: ctx.actor.sourceAddr ?? ctx.sourceAddr ?? null,
        reason: input.reason || null,
      };
      if (hub.systemdStatus().state !== "ok") {
        const message = `systemd is unreachable: ${hub.systemdStatus().message}`;
        hub.recordAction({ ...base, action: "stop" }, { error: message });
        throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message });
      }
      try {
        return await stopLoop(hub, agentParts(hub).crashLoops, base);
      } catch (err) {
        throw new TRPCError({ code: "BAD_REQUEST", message: (err as Error).message });
      }
    }),
    // units.journal (filters), units.journalHistogram, units.downloadJournal, units.file
    ...journalProcedures(services),
    followJournal: authedProcedure.input(followJournalInput).subscription(async function* ({ input, signal }) {
      const name = allowed(input.name);
      const linked = linkSignals(signal, services.shutdown);
      try {
        // one journalctl per unit for all its viewers (../journalShare.ts)
        for await (const entry of sharedJournalsFor(hub.host.systemd).follow(name, linked.signal, input.lastEventId ?? undefined)) {
          yield tracked(entry.cursor, entry);
        }
      } catch (err) {
        if (err instanceof JournalStreamError) throw new TRPCError({ code: "TOO_MANY_REQUESTS", message: err.message });
        throw err;
      } finally {
        linked.dispose();
      }
      if (services.shutdown.aborted) throw shuttingDown();
    }),
  });
}
