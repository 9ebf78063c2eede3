/**
 * `operations.*` for browsers, on one host: GPU-aware starts/restarts (created by
 * `units.restart|start({ waitForGpus: true })`). get/list for anyone signed in; cancel needs the
 * permission the operation's own action needs on its unit (restart or start), and is audited as
 * "operation.cancel" (the `canceled` step then gets its own row from the stream).
 */
import { TRPCError } from "@trpc/server";
import { can } from "../../auth/authorize";
import { hostOperationInput, hostOperationListInput } from "../../contract/operationSchemas";
import { router } from "../../trpc";
import { toPanelError } from "../agentErrors";
import { asActor, audited, callHost, hostLink, notSignedIn, signedInProcedure } from "../trpc";

export const OPERATION_CANCEL_AUDIT_ACTION = "operation.cancel";

export const operationsRouter = router({
  get: signedInProcedure.input(hostOperationInput).query(async ({ input: { host, id }, ctx }) => ({
    ...(await callHost(ctx.services, host, (agent) => agent.operations.get.query({ id }, asActor(ctx.actor)))),
    host,
  })),
  list: signedInProcedure.input(hostOperationListInput).query(async ({ input: { host, unit }, ctx }) => {
    const ops = await callHost(ctx.services, host, (agent) => agent.operations.list.query(unit ? { unit } : undefined, asActor(ctx.actor)));
    return ops.map((o) => ({ ...o, host }));
  }),
  cancel: audited((raw) => ({
    action: OPERATION_CANCEL_AUDIT_ACTION,
    unit: null,
    reason: typeof raw.id === "string" ? `operation ${raw.id.slice(0, 64)}` : null,
    host: typeof raw.host === "string" ? raw.host.slice(0, 100) : null,
  }))
    .use(({ ctx, next }) => {
      if (!ctx.actor) throw notSignedIn(ctx.panelRequest);
      return next({ ctx: { actor: ctx.actor } });
    })
    .input(hostOperationInput)
    .mutation(async ({ input: { host, id }, ctx }) => {
      const { actor, services } = ctx;
      const link = hostLink(services, host);
      const op = await callHost(services, host, (agent) => agent.operations.get.query({ id }, asActor(actor)));
      const base = {
        user: actor.user,
        role: actor.role,
        sourceAddr: ctx.panelRequest.sourceAddr,
        host,
        unit: op.unit,
        action: OPERATION_CANCEL_AUDIT_ACTION,
        reason: `operation ${id}`,
      };
      const decision = can(actor, op.kind, { host, unit: op.unit }, services.auth.authorization);
      if (!decision.allowed) {
        const message = `Not allowed: ${decision.reason}.`;
        await services.auth.audit.recordAudit({ ...base, outcome: "refused", detail: message });
        ctx.audit.recorded = true;
        throw new TRPCError({ code: "FORBIDDEN", message });
      }
      try {
        const after = await link.client.operations.cancel.mutate({ id }, asActor(actor));
        await services.auth.audit.recordAudit({ ...base, outcome: "ok", detail: `${op.kind} when its GPUs are free, during ${op.step}` });
        ctx.audit.recorded = true;
        return { ...after, host };
      } catch (err) {
        const e = toPanelError(err, link.errorContext);
        await services.auth.audit.recordAudit({ ...base, outcome: e.code === "CONFLICT" || e.code === "FORBIDDEN" ? "refused" : "error", detail: e.message });
        ctx.audit.recorded = true;
        throw e;
      }
    }),
});
