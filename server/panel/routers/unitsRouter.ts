/**
 * `units.*` for browsers: reads forwarded to the agent for anyone signed in; actions checked
 * (role, unit patterns, the "same action twice" guard), audited as pending → the job's result,
 * and forwarded with the acting user. Every refusal is audited once, by `audited`.
 */
import { tracked, TRPCError } from "@trpc/server";
import { can, unitPermissions } from "../../auth/authorize";
import { UNIT_ACTION_PROCEDURES } from "../../contract/procedures";
import { hostEngineHistoryInput, hostFollowJournalInput, hostTimelineInput, hostUnitInput, panelUnitActionInput } from "../../contract/schemas";
import type { JournalEntry, UnitAction } from "../../contract/types";
import { router } from "../../trpc";
import { toPanelError } from "../agentErrors";
import { agentStream } from "../agentStream";
import { asActor, audited, callHost, expensiveQueryProcedure, hostLink, notSignedIn, sessionBoundStream, signedInProcedure } from "../trpc";
import { crashLoopProcedures } from "./gpuCareProcedures";
import { journalPanelProcedures } from "./journalProcedures";
import { viewDiagnosis, viewHostSummary, viewReadinessTransitions, viewRightsOf, viewUnit } from "../roleViews";

/** The raw name as sent, for the audit row of a refusal (even when it is not a valid name). */
function rawUnit(raw: Record<string, unknown>): string | null {
  if (typeof raw.name === "string") return raw.name;
  return raw.name === undefined ? null : (JSON.stringify(raw.name) ?? null);
}

function unitAction(action: UnitAction) {
  const procedure = UNIT_ACTION_PROCEDURES[action];
  return audited((raw) => ({
    action,
    unit: rawUnit(raw),
    reason: typeof raw.reason === "string" ? raw.reason : null,
    host: typeof raw.host === "string" ? raw.host.slice(0, 100) : null,
  }))
    .use(({ ctx, next }) => {
      if (!ctx.actor) throw notSignedIn(ctx.panelRequest);
      return next({ ctx: { actor: ctx.actor } });
    })
    .input(panelUnitActionInput)
    .mutation(async ({ input, ctx }) => {
      const { actor, panelRequest: req, services } = ctx;
      const { auth } = services;
      const { host } = input;
      const decision = can(actor, action, { host, unit: input.name }, auth.authorization);
      if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
      const link = hostLink(services, host);
      const base = { user: actor.user, role: actor.role, sourceAddr: req.sourceAddr, host, unit: input.name, action, reason: input.reason || null };
      const claim = await auth.guard.claim({ host, unit: input.name, action, user: actor.user, confirmed: input.confirmed === true });
      if (!claim.ok) {
        await auth.audit.recordAudit({ ...base, outcome: "refused", detail: `confirmation required: ${claim.message}` });
        ctx.audit.recorded = true;
        // UI: show the message and offer to repeat with { confirmed: true }.
        throw new TRPCError({ code: "CONFLICT", message: `Confirmation required: ${claim.message}.` });
      }
      const auditId = await auth.audit.recordAudit({ ...base, outcome: "pending", detail: input.confirmed ? "confirmed after a recent action" : null });
      ctx.audit.recorded = true;
      try {
        const r = await link.client.units[procedure].mutate(
          { name: input.name, reason: input.reason, waitForGpus: input.waitForGpus, timeoutMs: input.timeoutMs },
          asActor(actor),
        );
        if ("operationId" in r && r.operationId) {
          // GPU-aware: audited step by step from the host's stream (fleet/operationAudit.ts)
          await services.settler.operations.track(host, r.operation, auditId);
          return { ...r, auditId };
        }
        const outcome = r.jobId === null ? "done" : (services.settler.finishedOutcome(host, r.jobId) ?? "pending");
        await auth.audit.updateAuditOutcome(auditId, outcome, { jobId: r.jobId });
        return { ...r, auditId };
      } catch (err) {
        await claim.release();
        const e = toPanelError(err, link.errorContext);
        await auth.audit.updateAuditOutcome(auditId, e.code === "FORBIDDEN" ? "refused" : "error", { detail: e.message });
        throw e;
      }
    });
}

/** Journals carry whatever a program printed: operators and admins, viewers only where the panel allows it. */
const journalReader = expensiveQueryProcedure.use(({ ctx, next }) => {
  const decision = ctx.services.auth.can(ctx.actor, "journal.view");
  if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
  return next();
});

export const unitsRouter = router({
  /** Every unit of every host that is connected (or was: the last known state, with the host's state in hosts.list). */
  list: signedInProcedure.query(({ ctx }) => {
    const rights = viewRightsOf(ctx.actor, ctx.services.auth);
    return {
      units: ctx.services.fleet.all().flatMap((l) => [...l.units.values()].map((u) => viewUnit({ ...u, host: l.name }, rights))),
      hosts: ctx.services.fleet.summaries().map((h) => viewHostSummary(h, rights)),
    };
  }),
  get: signedInProcedure.input(hostUnitInput).query(async ({ input: { host, name }, ctx }) => {
    const { services } = ctx;
    const full = await callHost(services, host, (agent) => agent.units.get.query({ name }, asActor(ctx.actor)));
    const detail = viewUnit(full, viewRightsOf(ctx.actor, services.auth));
    const recent = await services.auth.guard.peek(host, name);
    return {
      host,
      detail,
      permissions: unitPermissions(ctx.actor, { host, unit: name }, services.auth.authorization),
      /** A restart/stop/kill within the guard window: a repeat needs `confirmed: true`. */
      recentAction: recent ? { user: recent.user, action: recent.action, atMs: recent.at } : null,
    };
  }),
  start: unitAction("start"),
  stop: unitAction("stop"),
  restart: unitAction("restart"),
  resetFailed: unitAction("reset-failed"),
  kill: unitAction("kill"),
  // units.crashLoop, units.stopLoop
  ...crashLoopProcedures,
  diagnose: expensiveQueryProcedure
    .input(hostUnitInput)
    .query(async ({ input: { host, ...input }, ctx }) =>
      viewDiagnosis(
        await callHost(ctx.services, host, (agent) => agent.units.diagnose.query(input, asActor(ctx.actor))),
        viewRightsOf(ctx.actor, ctx.services.auth),
      ),
    ),
  timeline: expensiveQueryProcedure.input(hostTimelineInput).query(async ({ input: { host, ...input }, ctx }) => {
    const t = await callHost(ctx.services, host, (agent) => agent.units.timeline.query(input, asActor(ctx.actor)));
    // who acted from which address is the audit log's (operators and admins), not everyone's timeline
    const rights = viewRightsOf(ctx.actor, ctx.services.auth);
    return { ...t, actions: t.actions.map((a) => ({ ...a, sourceAddr: null })), readiness: viewReadinessTransitions(t.readiness, rights) };
  }),
  engineHistory: expensiveQueryProcedure
    .input(hostEngineHistoryInput)
    .query(({ input: { host, ...input }, ctx }) => callHost(ctx.services, host, (agent) => agent.units.engineHistory.query(input, asActor(ctx.actor)))),
  // units.journal (filters), units.journalHistogram, units.downloadJournal, units.file
  ...journalPanelProcedures,
  followJournal: journalReader.input(hostFollowJournalInput).subscription(async function* ({ input: { host, ...input }, ctx, signal }) {
    const link = hostLink(ctx.services, host);
    // re-checked when the caller's account changes: an operator made viewer loses the stream
    const bound = sessionBoundStream(ctx, signal, (subject) => ctx.services.auth.can(subject, "journal.view"));
    try {
      const stream = agentStream<JournalEntry>(
        (h) => link.client.units.followJournal.subscribe(input, { ...h, ...asActor(ctx.actor) }),
        bound.signal,
        link.errorContext,
      );
      for await (const { id, data } of stream) yield tracked(id, data);
      bound.throwIfEnded();
    } finally {
      bound.dispose();
    }
  }),
});
