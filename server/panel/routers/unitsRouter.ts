/**
 * `units.*` for browsers: reads forwarded to the agent for anyone signed in; actions checked
 * (role, unit patterns, the "same action twice" guard), audited as pending → the job's result,
 * and forwarded with the acting user. Every refusal is audited once, by `audited`.
 */
import { tracked, TRPCError } from "@trpc/server";
import { can, unitPermissions } from "../../auth/authorize";
import { UNIT_ACTION_PROCEDURES } from "../../contract/procedures";
import { followJournalInput, journalInput, panelUnitActionInput, timelineInput, unitInput } from "../../contract/schemas";
import type { JournalEntry, UnitAction } from "../../contract/types";
import { router } from "../../trpc";
import { toPanelError } from "../agentErrors";
import { agentStream } from "../agentStream";
import { asActor, audited, callAgent, notSignedIn, sessionBoundStream, signedInProcedure } from "../trpc";

/** The raw name as sent, for the audit row of a refusal (even when it is not a valid name). */
function rawUnit(raw: Record<string, unknown>): string | null {
  if (typeof raw.name === "string") return raw.name;
  return raw.name === undefined ? null : (JSON.stringify(raw.name) ?? null);
}

function unitAction(action: UnitAction) {
  const procedure = UNIT_ACTION_PROCEDURES[action];
  return audited((raw) => ({ action, unit: rawUnit(raw), reason: typeof raw.reason === "string" ? raw.reason : null }))
    .use(({ ctx, next }) => {
      if (!ctx.actor) throw notSignedIn(ctx.panelRequest);
      return next({ ctx: { actor: ctx.actor } });
    })
    .input(panelUnitActionInput)
    .mutation(async ({ input, ctx }) => {
      const { actor, panelRequest: req, services } = ctx;
      const { auth } = services;
      const decision = can(actor, action, input.name, auth.authorization);
      if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
      const host = await callAgent(services, () => services.agentHost.host());
      const base = { user: actor.user, role: actor.role, sourceAddr: req.sourceAddr, host, unit: input.name, action, reason: input.reason || null };
      const claim = auth.guard.claim({ host, unit: input.name, action, user: actor.user, confirmed: input.confirmed === true });
      if (!claim.ok) {
        auth.audit.recordAudit({ ...base, outcome: "refused", detail: `confirmation required: ${claim.message}` });
        ctx.audit.recorded = true;
        // UI: show the message and offer to repeat with { confirmed: true }.
        throw new TRPCError({ code: "CONFLICT", message: `Confirmation required: ${claim.message}.` });
      }
      const auditId = auth.audit.recordAudit({ ...base, outcome: "pending", detail: input.confirmed ? "confirmed after a recent action" : null });
      ctx.audit.recorded = true;
      try {
        const r = await callAgent(services, () => services.agent.units[procedure].mutate({ name: input.name, reason: input.reason }, asActor(actor)));
        const outcome = r.jobId === null ? "done" : (services.agentHost.finishedOutcome(host, r.jobId) ?? "pending");
        auth.audit.updateAuditOutcome(auditId, outcome, { jobId: r.jobId });
        return { ...r, auditId };
      } catch (err) {
        claim.release();
        const e = toPanelError(err, services.agentErrors);
        auth.audit.updateAuditOutcome(auditId, e.code === "FORBIDDEN" ? "refused" : "error", { detail: e.message });
        throw e;
      }
    });
}

export const unitsRouter = router({
  list: signedInProcedure.query(({ ctx }) => callAgent(ctx.services, () => ctx.services.agent.units.list.query(undefined, asActor(ctx.actor)))),
  get: signedInProcedure.input(unitInput).query(async ({ input, ctx }) => {
    const { services } = ctx;
    const detail = await callAgent(services, () => services.agent.units.get.query(input, asActor(ctx.actor)));
    const known = services.agentHost.hostName;
    const recent = known ? services.auth.guard.peek(known, input.name) : null;
    return {
      detail,
      permissions: unitPermissions(ctx.actor, input.name, services.auth.authorization),
      /** A restart/stop/kill within the guard window: a repeat needs `confirmed: true`. */
      recentAction: recent ? { user: recent.user, action: recent.action, atMs: recent.at } : null,
    };
  }),
  start: unitAction("start"),
  stop: unitAction("stop"),
  restart: unitAction("restart"),
  resetFailed: unitAction("reset-failed"),
  kill: unitAction("kill"),
  diagnose: signedInProcedure
    .input(unitInput)
    .query(({ input, ctx }) => callAgent(ctx.services, () => ctx.services.agent.units.diagnose.query(input, asActor(ctx.actor)))),
  timeline: signedInProcedure
    .input(timelineInput)
    .query(({ input, ctx }) => callAgent(ctx.services, () => ctx.services.agent.units.timeline.query(input, asActor(ctx.actor)))),
  journal: signedInProcedure
    .input(journalInput)
    .query(({ input, ctx }) => callAgent(ctx.services, () => ctx.services.agent.units.journal.query(input, asActor(ctx.actor)))),
  followJournal: signedInProcedure.input(followJournalInput).subscription(async function* ({ input, ctx, signal }) {
    const bound = sessionBoundStream(ctx, signal);
    try {
      const stream = agentStream<JournalEntry>(
        (h) => ctx.services.agent.units.followJournal.subscribe(input, { ...h, ...asActor(ctx.actor) }),
        bound.signal,
        ctx.services.agentErrors,
      );
      for await (const { id, data } of stream) yield tracked(id, data);
      bound.throwIfEnded();
    } finally {
      bound.dispose();
    }
  }),
});
