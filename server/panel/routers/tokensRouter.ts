/**
 * `tokens.*`: API tokens for scripts (server/auth/apiTokens.ts). Anyone signed in makes and
 * revokes their own personal tokens (at most their own rights); admins also make service tokens,
 * and list and revoke everyone's. The token itself is in `tokens.create`'s answer only, once.
 * Tokens are made from a signed-in browser (or the CLI on the panel host), never with a token:
 * a leaked token must not be able to outlive its expiry by minting another. Every change and
 * every refused one is audited (`token.create`, `token.revoke`).
 */
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { API_TOKEN_MAX_DAYS, API_TOKEN_NAME_MAX, type ApiTokenInfo } from "../../auth/apiTokens";
import { can } from "../../auth/authorize";
import { AuthError } from "../../auth/types";
import { unitPatternProblem } from "../../auth/userFields";
import { router } from "../../trpc";
import { audited, notSignedIn, signedInProcedure, type PanelRequest, type PanelServices } from "../trpc";

const createInput = z
  .object({
    name: z.string().trim().min(1, "the token needs a name").max(API_TOKEN_NAME_MAX),
    role: z.enum(["viewer", "operator", "admin"]),
    units: z
      .array(
        z
          .string()
          .trim()
          .superRefine((v, ctx) => {
            const problem = unitPatternProblem(v);
            if (problem) ctx.addIssue({ code: "custom", message: problem });
          }),
      )
      .max(64)
      .optional(),
    expiresInDays: z.number().int().min(1).max(API_TOKEN_MAX_DAYS),
    kind: z.enum(["personal", "service"]).default("personal"),
  })
  .strict();

const idInput = z.object({ id: z.number().int().positive() }).strict();

/** The signed-in user behind a request (a row in the users table), or why there is none to act for. */
async function signedInUser(req: PanelRequest, services: PanelServices) {
  if (services.demo) throw new TRPCError({ code: "BAD_REQUEST", message: "Demo mode has no API tokens: everyone is the demo admin." });
  const p = req.principal;
  if (!p) throw notSignedIn(req);
  if (p.via === "token") throw new TRPCError({ code: "FORBIDDEN", message: "Make and revoke API tokens from a signed-in browser, not with a token." });
  const user = p.userId === null ? null : await services.auth.users.getUserById(p.userId);
  if (!user) throw new TRPCError({ code: "BAD_REQUEST", message: "This identity has no panel account to own tokens (a reverse-proxy default)." });
  return user;
}

const describe = (t: ApiTokenInfo) =>
  `${t.kind} token '${t.name}' of ${t.owner}: ${t.role}${t.units.length ? ` on ${t.units.join(", ")}` : ""}, expires ${new Date(t.expiresAt).toISOString()}`;

/** An audited call that needs a signed-in caller (refused ones are audited too). */
const signedInAudited = (describe: Parameters<typeof audited>[0]) =>
  audited(describe).use(({ ctx, next }) => {
    if (!ctx.actor) throw notSignedIn(ctx.panelRequest);
    return next({ ctx: { actor: ctx.actor } });
  });

export const tokensRouter = router({
  /** Your tokens; `all` (admins): everyone's. Never the token itself. */
  list: signedInProcedure.input(z.object({ all: z.boolean().optional() }).strict().optional()).query(async ({ input, ctx }) => {
    const user = await signedInUser(ctx.panelRequest, ctx.services);
    if (input?.all) {
      const d = can(ctx.actor, "users.manage");
      if (!d.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${d.reason}.` });
      return { tokens: await ctx.services.auth.tokens.list(null) };
    }
    return { tokens: await ctx.services.auth.tokens.list(user.id) };
  }),

  create: signedInAudited((raw) => ({ action: "token.create", reason: typeof raw.name === "string" ? `token ${raw.name.slice(0, 64)}` : null }))
    .input(createInput)
    .mutation(async ({ input, ctx }) => {
      const { services, panelRequest: req } = ctx;
      const owner = await signedInUser(req, services);
      let made: Awaited<ReturnType<typeof services.auth.tokens.create>>;
      try {
        made = await services.auth.tokens.create({ owner, ...input });
      } catch (err) {
        if (err instanceof AuthError) throw new TRPCError({ code: "BAD_REQUEST", message: `${err.message[0]!.toUpperCase()}${err.message.slice(1)}.` });
        throw err;
      }
      await services.auth.audit.recordAudit({
        user: ctx.actor.user,
        role: ctx.actor.role,
        sourceAddr: req.sourceAddr,
        host: null,
        unit: null,
        action: "token.create",
        reason: `token ${made.info.name}`,
        outcome: "ok",
        detail: describe(made.info),
      });
      ctx.audit.recorded = true;
      return { ...made.info, token: made.token };
    }),

  revoke: signedInAudited((raw) => ({ action: "token.revoke", reason: typeof raw.id === "number" ? `token #${raw.id}` : null }))
    .input(idInput)
    .mutation(async ({ input, ctx }) => {
      const { services, panelRequest: req } = ctx;
      const user = await signedInUser(req, services);
      const token = await services.auth.tokens.get(input.id);
      const mayAll = can(ctx.actor, "users.manage").allowed;
      if (!token || (token.ownerId !== user.id && !mayAll)) throw new TRPCError({ code: "NOT_FOUND", message: `You have no API token #${input.id}.` });
      if (token.revokedAt !== null) return { ...token };
      const after = (await services.auth.tokens.revoke(token.id)) ?? token;
      services.streams.changed({ userId: token.ownerId, username: null });
      await services.auth.audit.recordAudit({
        user: ctx.actor.user,
        role: ctx.actor.role,
        sourceAddr: req.sourceAddr,
        host: null,
        unit: null,
        action: "token.revoke",
        reason: `token ${token.name}`,
        outcome: "ok",
        detail: describe(token),
      });
      ctx.audit.recorded = true;
      return after;
    }),
});
