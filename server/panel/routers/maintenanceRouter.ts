/**
 * `maintenance.*`: planned maintenance windows. Everyone signed in lists them (the Alerts page,
 * a unit page's banner); admins create and end them, and every change and refusal is audited.
 * The config file's windows (`[[panel.maintenance]]`) are listed, read-only.
 */
import { TRPCError } from "@trpc/server";
import { can } from "../../auth/authorize";
import { MaintenanceError } from "../../alerts/maintenance";
import { createMaintenanceInput, maintenanceIdInput } from "../../contract/maintenance";
import { router } from "../../trpc";
import { ALERT_AUDIT_ACTIONS } from "./auditActions";
import { audited, notSignedIn, signedInProcedure } from "../trpc";

const str = (v: unknown, max = 120) => (typeof v === "string" ? v.slice(0, max) : null);

function adminChange(action: string) {
  return audited((raw) => ({
    action,
    unit: null,
    host: null,
    detailPrefix: raw.name ? `window=${str(raw.name)}: ` : typeof raw.id === "number" ? `window ${raw.id}: ` : undefined,
  })).use(({ ctx, next }) => {
    if (!ctx.actor) throw notSignedIn(ctx.panelRequest);
    const decision = can(ctx.actor, "settings.manage", null, ctx.services.auth.authorization);
    if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
    return next({ ctx: { actor: ctx.actor } });
  });
}

export const maintenanceRouter = router({
  list: signedInProcedure.query(({ ctx }) => ctx.services.alerts.maintenanceViews()),
  create: adminChange(ALERT_AUDIT_ACTIONS.maintenanceCreate)
    .input(createMaintenanceInput)
    .mutation(async ({ input, ctx }) => {
      let view;
      try {
        view = await ctx.services.alerts.createMaintenance(input, ctx.actor.user);
      } catch (err) {
        if (err instanceof MaintenanceError) throw new TRPCError({ code: "BAD_REQUEST", message: err.message });
        throw err;
      }
      const when =
        view.cron !== null
          ? `cron "${view.cron}" ${view.timeZone} for ${view.durationMinutes} min`
          : `${new Date(view.startsAtMs!).toISOString()} to ${new Date(view.endsAtMs!).toISOString()}`;
      await ctx.services.auth.audit.recordAudit({
        user: ctx.actor.user,
        role: ctx.actor.role,
        sourceAddr: ctx.panelRequest.sourceAddr,
        host: null,
        unit: view.units.join(",").slice(0, 300),
        action: ALERT_AUDIT_ACTIONS.maintenanceCreate,
        reason: view.name,
        outcome: "ok",
        detail: `window ${view.id}: ${when}`,
      });
      ctx.audit.recorded = true;
      return view;
    }),
  end: adminChange(ALERT_AUDIT_ACTIONS.maintenanceEnd)
    .input(maintenanceIdInput)
    .mutation(async ({ input, ctx }) => {
      const ended = await ctx.services.alerts.endMaintenance(input.id, ctx.actor.user);
      if (!ended) throw new TRPCError({ code: "NOT_FOUND", message: `There is no maintenance window ${input.id} that has not ended.` });
      await ctx.services.auth.audit.recordAudit({
        user: ctx.actor.user,
        role: ctx.actor.role,
        sourceAddr: ctx.panelRequest.sourceAddr,
        host: null,
        unit: ended.units.join(",").slice(0, 300),
        action: ALERT_AUDIT_ACTIONS.maintenanceEnd,
        reason: ended.name,
        outcome: "ok",
        detail: `window ${ended.id} ended`,
      });
      ctx.audit.recorded = true;
      return ended;
    }),
});
