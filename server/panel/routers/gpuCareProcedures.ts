/**
 * The panel's side of GPU faults, killing a GPU holder and the crash-loop brake, on one host:
 *   gpus.faults({ host, sinceMs?, unit? })     anyone signed in
 *   gpus.killHolder({ host, unit, pid, startedAtMs, reason? })   admins only; audited "gpu.kill-holder"
 *   units.crashLoop({ host, name })            anyone signed in (the evidence)
 *   units.stopLoop({ host, name, reason? })    the unit's stop permission; audited "stop-loop",
 *                                              settled with the stop job's result
 * Spread into the gpus and units routers (./gpusRouter.ts, ./unitsRouter.ts).
 */
import { TRPCError } from "@trpc/server";
import { can } from "../../auth/authorize";
import { formatCmdline, formatGpus } from "../../contract/format";
import { hostFaultsInput, hostKillHolderInput, hostStopLoopInput } from "../../contract/operationSchemas";
import { hostUnitInput } from "../../contract/schemas";
import { toPanelError } from "../agentErrors";
import { viewCrashLoop, viewRightsOf } from "../roleViews";
import { asActor, audited, callHost, expensiveQueryProcedure, hostLink, notSignedIn, signedInProcedure } from "../trpc";

export const KILL_HOLDER_AUDIT_ACTION = "gpu.kill-holder";
export const STOP_LOOP_AUDIT_ACTION = "stop-loop";

const describeRaw = (action: string) => (raw: Record<string, unknown>) => ({
  action,
  unit: typeof raw.name === "string" ? raw.name : typeof raw.unit === "string" ? raw.unit : null,
  reason: typeof raw.reason === "string" ? raw.reason : null,
  host: typeof raw.host === "string" ? raw.host.slice(0, 100) : null,
  detailPrefix: typeof raw.pid === "number" ? `pid=${raw.pid}: ` : undefined,
});

const actionProcedure = (action: string) =>
  audited(describeRaw(action)).use(({ ctx, next }) => {
    if (!ctx.actor) throw notSignedIn(ctx.panelRequest);
    return next({ ctx: { actor: ctx.actor } });
  });

export const gpuFaultProcedures = {
  faults: signedInProcedure
    .input(hostFaultsInput)
    .query(({ input: { host, ...input }, ctx }) => callHost(ctx.services, host, (agent) => agent.gpus.faults.query(input, asActor(ctx.actor)))),
  killHolder: actionProcedure(KILL_HOLDER_AUDIT_ACTION)
    .input(hostKillHolderInput)
    .mutation(async ({ input: { host, ...input }, ctx }) => {
      const { actor, services } = ctx;
      if (actor.role !== "admin") throw new TRPCError({ code: "FORBIDDEN", message: "Not allowed: only admins may SIGKILL a process that holds GPU memory." });
      const link = hostLink(services, host);
      const base = {
        user: actor.user,
        role: actor.role,
        sourceAddr: ctx.panelRequest.sourceAddr,
        host,
        unit: input.unit,
        action: KILL_HOLDER_AUDIT_ACTION,
        reason: input.reason || null,
      };
      try {
        const r = await link.client.gpus.killHolder.mutate(input, asActor(actor));
        const owner = r.unit ?? "outside any unit";
        await services.auth.audit.recordAudit({
          ...base,
          outcome: "ok",
          detail: `SIGKILL PID ${r.pid} (${owner}: ${formatCmdline(r.cmdline, 200)}) holding memory on ${formatGpus([r.gpu])}`,
        });
        ctx.audit.recorded = true;
        return r;
      } catch (err) {
        const e = toPanelError(err, link.errorContext);
        await services.auth.audit.recordAudit({
          ...base,
          outcome: e.code === "INTERNAL_SERVER_ERROR" ? "error" : "refused",
          detail: `pid=${input.pid}: ${e.message}`,
        });
        ctx.audit.recorded = true;
        throw e;
      }
    }),
};

export const crashLoopProcedures = {
  crashLoop: expensiveQueryProcedure
    .input(hostUnitInput)
    .query(async ({ input: { host, name }, ctx }) =>
      viewCrashLoop(
        await callHost(ctx.services, host, (agent) => agent.units.crashLoop.query({ name }, asActor(ctx.actor))),
        viewRightsOf(ctx.actor, ctx.services.auth),
      ),
    ),
  stopLoop: actionProcedure(STOP_LOOP_AUDIT_ACTION)
    .input(hostStopLoopInput)
    .mutation(async ({ input: { host, name, reason }, ctx }) => {
      const { actor, services } = ctx;
      const decision = can(actor, "stop", { host, unit: name }, services.auth.authorization);
      if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
      const link = hostLink(services, host);
      const auditId = await services.auth.audit.recordAudit({
        user: actor.user,
        role: actor.role,
        sourceAddr: ctx.panelRequest.sourceAddr,
        host,
        unit: name,
        action: STOP_LOOP_AUDIT_ACTION,
        reason: reason || null,
        outcome: "pending",
        detail: "stop, then reset-failed",
      });
      ctx.audit.recorded = true;
      try {
        const r = await link.client.units.stopLoop.mutate({ name, reason }, asActor(actor));
        const outcome = r.jobId === null ? "done" : (services.settler.finishedOutcome(host, r.jobId) ?? "pending");
        const restarts = r.evidence.restarts.length;
        await services.auth.audit.updateAuditOutcome(auditId, outcome, {
          jobId: r.jobId,
          detail: `stop, then reset-failed; ${restarts} restart${restarts === 1 ? "" : "s"} in the evidence`,
        });
        return { ...r, evidence: viewCrashLoop(r.evidence, viewRightsOf(actor, services.auth)), auditId };
      } catch (err) {
        const e = toPanelError(err, link.errorContext);
        await services.auth.audit.updateAuditOutcome(auditId, e.code === "FORBIDDEN" ? "refused" : "error", { detail: e.message });
        throw e;
      }
    }),
};
