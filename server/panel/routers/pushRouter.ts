/**
 * `push.*`: Web Push to the caller's own browsers (server/push/). Anyone signed in with a panel
 * account subscribes the browser they are using ("Notify this device" on the Account page),
 * removes it, lists theirs, and sends themselves a test. `push.vapidPublicKey` is what
 * `PushManager.subscribe({ applicationServerKey })` needs. Subscribing and removing are audited
 * (`push.subscribe`, `push.unsubscribe`), refusals too; the endpoint is never written there.
 */
import { TRPCError } from "@trpc/server";
import { pushSubscribeInput, pushUnsubscribeInput } from "../../contract/push";
import { endpointTag, PushLimitError } from "../../push/store";
import { PushInputError } from "../../push/service";
import { router } from "../../trpc";
import { audited, notSignedIn, signedInProcedure, type PanelRequest, type PanelServices } from "../trpc";

/** The signed-in user's account id, or why push needs one. */
function accountId(req: PanelRequest, services: PanelServices): number {
  if (services.demo) throw new TRPCError({ code: "BAD_REQUEST", message: "Demo mode has no accounts to send push notifications to." });
  const p = req.principal;
  if (!p) throw notSignedIn(req);
  if (p.via === "token") throw new TRPCError({ code: "FORBIDDEN", message: "Subscribe a browser from the browser, signed in, not with an API token." });
  if (p.userId === null)
    throw new TRPCError({ code: "BAD_REQUEST", message: "This identity has no panel account to send notifications to (a reverse-proxy default)." });
  return p.userId;
}

const signedInAudited = (action: string) =>
  audited(() => ({ action, host: null })).use(({ ctx, next }) => {
    if (!ctx.actor) throw notSignedIn(ctx.panelRequest);
    return next({ ctx: { actor: ctx.actor } });
  });

function asBadRequest(err: unknown): never {
  if (err instanceof PushInputError || err instanceof PushLimitError) throw new TRPCError({ code: "BAD_REQUEST", message: err.message, cause: err });
  throw err;
}

export const pushRouter = router({
  /** The panel's VAPID public key (base64url), the same on every replica. */
  vapidPublicKey: signedInProcedure.query(async ({ ctx }) => {
    if (!ctx.services.push.enabled)
      throw new TRPCError({ code: "PRECONDITION_FAILED", message: "Push notifications are turned off on this panel (GPUDECK_PUSH=0)." });
    return { publicKey: await ctx.services.push.publicKey() };
  }),

  /** The caller's subscribed browsers (the push service's origin, never the endpoint). */
  list: signedInProcedure.query(async ({ ctx }) => {
    const userId = accountId(ctx.panelRequest, ctx.services);
    return { enabled: ctx.services.push.enabled, devices: await ctx.services.push.devices(userId) };
  }),

  /** Subscribe this browser: `PushSubscription.toJSON()` as it is. */
  subscribe: signedInAudited("push.subscribe")
    .input(pushSubscribeInput)
    .mutation(async ({ input, ctx }) => {
      const { services, panelRequest: req } = ctx;
      const userId = accountId(req, services);
      const saved = await services.push.subscribe(userId, input.subscription, req.userAgent).catch(asBadRequest);
      await services.auth.audit.recordAudit({
        user: ctx.actor.user,
        role: ctx.actor.role,
        sourceAddr: req.sourceAddr,
        host: null,
        unit: null,
        action: "push.subscribe",
        reason: null,
        outcome: "ok",
        detail: `browser subscribed (${endpointTag(input.subscription.endpoint)})${saved.replaced ? ", replacing its earlier subscription" : ""}`,
      });
      ctx.audit.recorded = true;
      return { id: saved.id };
    }),

  unsubscribe: signedInAudited("push.unsubscribe")
    .input(pushUnsubscribeInput)
    .mutation(async ({ input, ctx }) => {
      const { services, panelRequest: req } = ctx;
      const userId = accountId(req, services);
      const removed = await services.push.unsubscribe(userId, input.endpoint);
      if (removed) {
        await services.auth.audit.recordAudit({
          user: ctx.actor.user,
          role: ctx.actor.role,
          sourceAddr: req.sourceAddr,
          host: null,
          unit: null,
          action: "push.unsubscribe",
          reason: null,
          outcome: "ok",
          detail: `browser unsubscribed (${endpointTag(input.endpoint)})`,
        });
        ctx.audit.recorded = true;
      }
      return { removed };
    }),

  /** A test notification to each of the caller's subscribed browsers (queued; `push.list` shows how it went). */
  test: signedInProcedure.mutation(async ({ ctx }) => {
    const userId = accountId(ctx.panelRequest, ctx.services);
    const r = await ctx.services.push.test(userId, ctx.actor.user).catch(asBadRequest);
    if (r.devices === 0) throw new TRPCError({ code: "BAD_REQUEST", message: "No browser of yours is subscribed: choose “Notify this device” first." });
    ctx.services.alerts.deliverer.kick();
    return r;
  }),
});
