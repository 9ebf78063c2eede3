/**
 * `alerts.*`: open alerts and their history (everyone signed in), the rules in force, channels
 * and their delivery log (admins; a secret goes in, never out: views carry hints), and silences
 * (admins, and operators for units they may restart). Every change and every refused one is
 * audited. Nothing here waits on a receiver: "send test" queues a message and returns.
 */
import { TRPCError } from "@trpc/server";
import { can } from "../../auth/authorize";
import { ChannelConfigError } from "../../alerts/channels";
import { egressPolicy, urlEgressProblem } from "../../egress/guard";
import { urlHint } from "../../alerts/channels";
import { AckError } from "../../alerts/lifecycle";
import {
  ackAlertInput,
  addChannelInput,
  addSilenceInput,
  alertListInput,
  channelIdInput,
  deliveryListInput,
  silenceIdInput,
  updateChannelInput,
} from "../../contract/alerts";
import type { Actor } from "../../contract/actors";
import { router } from "../../trpc";
import { ALERT_AUDIT_ACTIONS } from "./auditActions";
import { audited, notSignedIn, signedInProcedure, type PanelRequest, type PanelServices } from "../trpc";
import { viewAlert, viewRightsOf } from "../roleViews";

type Ctx = { actor: Actor | null; panelRequest: PanelRequest; services: PanelServices };

function requireAdmin(ctx: Ctx): Actor {
  if (!ctx.actor) throw notSignedIn(ctx.panelRequest);
  const decision = can(ctx.actor, "settings.manage", null, ctx.services.auth.authorization);
  if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
  return ctx.actor;
}

const adminProcedure = signedInProcedure.use(({ ctx, next }) => next({ ctx: { actor: requireAdmin(ctx) } }));

const str = (v: unknown, max = 100) => (typeof v === "string" ? v.slice(0, max) : null);

/** A change to channels: audited, admins only; never in demo mode (no login: nobody may point the panel at a URL). */
function channelChange(action: string) {
  return audited((raw) => ({ action, unit: null, host: null, detailPrefix: raw.name || raw.id ? `channel=${str(raw.name) ?? str(raw.id)}: ` : undefined })).use(
    ({ ctx, next }) => {
      if (ctx.services.demo)
        throw new TRPCError({
          code: "FORBIDDEN",
          message: "Not allowed: a demo panel (GPUDECK_DEMO) sends no alerts; configure channels on a panel with sign-in.",
        });
      return next({ ctx: { actor: requireAdmin(ctx) } });
    },
  );
}

function silenceChange(action: string) {
  return audited((raw) => ({ action, unit: str(raw.unit, 300), host: str(raw.host), reason: str(raw.reason, 500) })).use(({ ctx, next }) => {
    if (!ctx.actor) throw notSignedIn(ctx.panelRequest);
    if (ctx.actor.role === "viewer") throw new TRPCError({ code: "FORBIDDEN", message: "Not allowed: viewers cannot silence alerts." });
    return next({ ctx: { actor: ctx.actor } });
  });
}

async function record(
  ctx: { actor: Actor; panelRequest: PanelRequest; services: PanelServices; audit: { recorded: boolean } },
  row: { action: string; host?: string | null; unit?: string | null; reason?: string | null; detail: string },
): Promise<void> {
  await ctx.services.auth.audit.recordAudit({
    user: ctx.actor.user,
    role: ctx.actor.role,
    sourceAddr: ctx.panelRequest.sourceAddr,
    host: row.host ?? null,
    unit: row.unit ?? null,
    action: row.action,
    reason: row.reason ?? null,
    outcome: "ok",
    detail: row.detail,
  });
  ctx.audit.recorded = true;
}

/** Channel errors people can act on (a name taken, a field the type has not) are BAD_REQUEST, not a crash. */
async function channelCall<T>(fn: () => Promise<T>, url?: string): Promise<T> {
  // a url the egress guard refuses is refused when it is saved (each send is checked again)
  const problem = url === undefined ? null : urlEgressProblem(url, egressPolicy());
  if (problem) throw new TRPCError({ code: "BAD_REQUEST", message: `Not a place the panel sends alerts to: ${problem}.` });
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ChannelConfigError) throw new TRPCError({ code: "BAD_REQUEST", message: err.message });
    throw err;
  }
}

/** Operators silence only what they may restart: a literal host and unit within their patterns. */
function maySilence(ctx: Ctx & { actor: Actor }, host: string, unit: string | undefined): void {
  if (ctx.actor.role === "admin") return;
  const literal = (s: string) => !/[*?]/.test(s);
  if (!unit || !literal(host) || !literal(unit))
    throw new TRPCError({
      code: "FORBIDDEN",
      message: "Not allowed: operators silence one unit of one host (no patterns); admins silence hosts and patterns.",
    });
  const decision = can(ctx.actor, "restart", { host, unit }, ctx.services.auth.authorization);
  if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
}

const channelsRouter = router({
  list: adminProcedure.query(({ ctx }) => ctx.services.alerts.channelViews()),
  add: channelChange(ALERT_AUDIT_ACTIONS.channelAdd)
    .input(addChannelInput)
    .mutation(async ({ input, ctx }) => {
      const view = await channelCall(() => ctx.services.alerts.addChannel(input, ctx.actor.user), input.url);
      await record(ctx, { action: ALERT_AUDIT_ACTIONS.channelAdd, detail: `channel=${view.name} type=${view.type} url=${view.urlHint}` });
      return view;
    }),
  update: channelChange(ALERT_AUDIT_ACTIONS.channelUpdate)
    .input(updateChannelInput)
    .mutation(async ({ input, ctx }) => {
      const view = await channelCall(() => ctx.services.alerts.updateChannel(input), input.url);
      const changed = Object.keys(input)
        .filter((k) => k !== "id")
        .map((k) =>
          k === "url" ? `url=${urlHint(input.url!)}` : ["token", "password"].includes(k) ? `${k} ${input[k as "token"] === null ? "removed" : "replaced"}` : k,
        )
        .join(" ");
      await record(ctx, { action: ALERT_AUDIT_ACTIONS.channelUpdate, detail: `channel=${view.name}: ${changed || "no change"}` });
      return view;
    }),
  remove: channelChange(ALERT_AUDIT_ACTIONS.channelRemove)
    .input(channelIdInput)
    .mutation(async ({ input, ctx }) => {
      const removed = await channelCall(() => ctx.services.alerts.removeChannel(input.id));
      await record(ctx, { action: ALERT_AUDIT_ACTIONS.channelRemove, detail: `channel=${removed.name} removed` });
      return { removed: removed.id };
    }),
  /** Queues a test message; `alerts.deliveries({ channelId })` shows how it went. */
  test: channelChange(ALERT_AUDIT_ACTIONS.channelTest)
    .input(channelIdInput)
    .mutation(async ({ input, ctx }) => {
      const { channel, messageId } = await channelCall(() => ctx.services.alerts.testChannel(input.id));
      await record(ctx, { action: ALERT_AUDIT_ACTIONS.channelTest, detail: `channel=${channel.name}: test message ${messageId} queued` });
      return { queued: true, messageId };
    }),
});

const silencesRouter = router({
  list: signedInProcedure.query(({ ctx }) => ctx.services.alerts.silences()),
  add: silenceChange(ALERT_AUDIT_ACTIONS.silenceAdd)
    .input(addSilenceInput)
    .mutation(async ({ input, ctx }) => {
      maySilence(ctx, input.host, input.unit);
      const silence = await ctx.services.alerts.addSilence(input, ctx.actor.user);
      await record(ctx, {
        action: ALERT_AUDIT_ACTIONS.silenceAdd,
        host: input.host,
        unit: input.unit ?? null,
        reason: input.reason,
        detail: `silence ${silence.id}: ${input.rule ?? "every rule"} for ${input.minutes} min`,
      });
      return silence;
    }),
  remove: silenceChange(ALERT_AUDIT_ACTIONS.silenceRemove)
    .input(silenceIdInput)
    .mutation(async ({ input, ctx }) => {
      const before = (await ctx.services.alerts.silences()).find((s) => s.id === input.id && s.active);
      if (!before) throw new TRPCError({ code: "NOT_FOUND", message: `There is no silence ${input.id} in force.` });
      maySilence(ctx, before.host, before.unit ?? undefined);
      await ctx.services.alerts.endSilence(input.id, ctx.actor.user);
      await record(ctx, { action: ALERT_AUDIT_ACTIONS.silenceRemove, host: before.host, unit: before.unit, detail: `silence ${input.id} ended early` });
      return { ended: input.id };
    }),
});

/** "I'm on it": operators for units they may restart (a host's own alerts: hosts they may restart something on … admins), admins for all. */
const ack = audited((raw) => ({
  action: ALERT_AUDIT_ACTIONS.alertAck,
  unit: null,
  host: null,
  detailPrefix: typeof raw.id === "number" ? `alert ${raw.id}: ` : undefined,
}))
  .input(ackAlertInput)
  .mutation(async ({ input, ctx }) => {
    if (!ctx.actor) throw notSignedIn(ctx.panelRequest);
    const actor = ctx.actor;
    const row = await ctx.services.alerts.alert(input.id);
    if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `There is no alert ${input.id}.` });
    if (actor.role !== "admin") {
      if (actor.role === "viewer") throw new TRPCError({ code: "FORBIDDEN", message: "Not allowed: viewers cannot acknowledge alerts." });
      if (row.unit === "") throw new TRPCError({ code: "FORBIDDEN", message: "Not allowed: a host's own alerts are acknowledged by admins." });
      const decision = can(actor, "restart", { host: row.host, unit: row.unit }, ctx.services.auth.authorization);
      if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
    }
    try {
      const { alert, messageId } = await ctx.services.alerts.ack(input.id, actor.user, input.note || null);
      await record(
        { ...ctx, actor },
        {
          action: ALERT_AUDIT_ACTIONS.alertAck,
          host: alert.host,
          unit: alert.unit,
          reason: input.note || null,
          detail: `alert ${alert.id} (${alert.rule}) acknowledged${messageId === null ? "; nothing had been sent, so no one is told" : `; message ${messageId} queued`}`,
        },
      );
      return alert;
    } catch (err) {
      if (err instanceof AckError) throw new TRPCError({ code: err.code, message: err.message });
      throw err;
    }
  });

export const alertsRouter = router({
  ack,
  // an alert's diagnosis may carry log lines: for who may read journals (server/panel/roleViews.ts)
  list: signedInProcedure.input(alertListInput).query(async ({ input, ctx }) => {
    const page = await ctx.services.alerts.list(input);
    const rights = viewRightsOf(ctx.actor, ctx.services.auth);
    return { ...page, alerts: page.alerts.map((a) => viewAlert(a, rights)) };
  }),
  rules: signedInProcedure.query(({ ctx }) => ctx.services.alerts.rules()),
  deliveries: adminProcedure.input(deliveryListInput).query(({ input, ctx }) => ctx.services.alerts.deliveries(input)),
  channels: channelsRouter,
  silences: silencesRouter,
});
