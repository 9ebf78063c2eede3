/**
 * `statusPage.*`: the stakeholders' page, set up by admins. `get` shows the settings (a token
 * hint, never the token); `update({ enabled, public, showHosts, groups })`; `rotateToken()`
 * makes a new link token and returns it this once, with the link (`/status?token=…`). The
 * page itself is served without a session by app/status/ (server/statusPage/http.ts).
 */
import { TRPCError } from "@trpc/server";
import { can } from "../../auth/authorize";
import type { Actor } from "../../contract/actors";
import { updateStatusPageInput } from "../../contract/statusPage";
import { router } from "../../trpc";
import { ALERT_AUDIT_ACTIONS } from "./auditActions";
import { audited, notSignedIn, signedInProcedure, type PanelRequest, type PanelServices } from "../trpc";

function requireAdmin(ctx: { actor: Actor | null; panelRequest: PanelRequest; services: PanelServices }): Actor {
  if (!ctx.actor) throw notSignedIn(ctx.panelRequest);
  const decision = can(ctx.actor, "settings.manage", null, ctx.services.auth.authorization);
  if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
  return ctx.actor;
}

function change(action: string) {
  return audited(() => ({ action, unit: null, host: null })).use(({ ctx, next }) => next({ ctx: { actor: requireAdmin(ctx) } }));
}

async function record(
  ctx: { actor: Actor; panelRequest: PanelRequest; services: PanelServices; audit: { recorded: boolean } },
  action: string,
  detail: string,
): Promise<void> {
  await ctx.services.auth.audit.recordAudit({
    user: ctx.actor.user,
    role: ctx.actor.role,
    sourceAddr: ctx.panelRequest.sourceAddr,
    host: null,
    unit: null,
    action,
    reason: null,
    outcome: "ok",
    detail,
  });
  ctx.audit.recorded = true;
}

export const statusPageRouter = router({
  get: signedInProcedure.use(({ ctx, next }) => next({ ctx: { actor: requireAdmin(ctx) } })).query(({ ctx }) => ctx.services.statusPage.view()),
  update: change(ALERT_AUDIT_ACTIONS.statusPageUpdate)
    .input(updateStatusPageInput)
    .mutation(async ({ input, ctx }) => {
      const view = await ctx.services.statusPage.update(input, ctx.actor.user);
      const parts = [
        input.enabled !== undefined ? `enabled=${input.enabled}` : null,
        input.public !== undefined ? `public=${input.public}` : null,
        input.showHosts !== undefined ? `showHosts=${input.showHosts}` : null,
        input.groups !== undefined ? `groups=${input.groups.map((g) => g.name).join("|") || "none"}` : null,
      ].filter(Boolean);
      await record(ctx, ALERT_AUDIT_ACTIONS.statusPageUpdate, parts.join(" ") || "no change");
      return view;
    }),
  rotateToken: change(ALERT_AUDIT_ACTIONS.statusPageRotateToken).mutation(async ({ ctx }) => {
    const r = await ctx.services.statusPage.rotateToken(ctx.actor.user);
    await record(ctx, ALERT_AUDIT_ACTIONS.statusPageRotateToken, `new link token …${r.token.slice(-4)}; the previous one no longer works`);
    return r;
  }),
});
