/**
 * The panel's `users` area: admins manage panel users from the browser, as `npm run user` does
 * from a shell (server/auth/cli.ts), through the same store methods.
 *
 * - Admin only, checked here with `can(actor, "users.manage")`; viewers and operators get
 *   FORBIDDEN, and the refusal is audited.
 * - Every change and every refused change is in the audit log (`user.add`, `user.update`,
 *   `user.disable`, `user.enable`, `user.passwd`, `user.2fa.reset`; unit null — the names the CLI records, so one
 *   filter finds both). The detail says what
 *   changed; a password never reaches the audit log, an error message or a log line.
 * - A password reset and a disable end every session of that user (the store deletes them in the
 *   same transaction) and their open live streams (`streams.changed()`); a role or units change
 *   makes their open streams re-check what they may still see (a journal stream of an operator
 *   made viewer ends with FORBIDDEN), on every replica through the `sessions` panel event.
 * - No admin can disable or demote themself, or reset their own password here (the account page
 *   asks for the current one); the store refuses to disable or demote the last enabled admin.
 * - Demo mode has no users: every procedure answers BAD_REQUEST.
 */
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { can } from "../../auth/authorize";
import type { PanelAuth } from "../../auth/panelAuth";
import { passwordProblem } from "../../auth/passwords";
import { AuthError, type AuthErrorCode, type User } from "../../auth/types";
import { unitPatternProblem, usernameProblem } from "../../auth/userFields";
import type { Actor, Role } from "../../contract/actors";
import type { PanelUser } from "../../contract/users";
import { router } from "../../trpc";
import { audited, notSignedIn, panelProcedure, type PanelRequest } from "../trpc";

export const MAX_UNIT_PATTERNS = 64;
const DEMO_MESSAGE = "Demo mode has no users: everyone is the demo admin.";

/** "refusing to …" → "Refusing to ….": store messages as sentences. */
function sentence(message: string): string {
  const s = message.trim();
  if (s.length === 0) return s;
  return `${s[0]!.toUpperCase()}${s.slice(1)}${/[.!?]$/.test(s) ? "" : "."}`;
}

const usernameSchema = z
  .string({ error: "username must be a string" })
  .trim()
  // usernameProblem bounds the length (128) before anything else; the body is bounded anyway
  .superRefine((value, ctx) => {
    const problem = usernameProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

const roleSchema = z.enum(["viewer", "operator", "admin"] satisfies Role[], { error: "role must be viewer, operator or admin" });

const unitPatternsSchema = z
  .array(
    z
      .string({ error: "each unit pattern must be a string" })
      .trim()
      .superRefine((value, ctx) => {
        // empty entries are dropped (a trailing comma in the form), anything else must be a glob;
        // unitPatternProblem checks the length (256) first
        const problem = value.length === 0 ? null : unitPatternProblem(value);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      }),
    { error: "unitPatterns must be a list of unit globs" },
  )
  .max(MAX_UNIT_PATTERNS, `at most ${MAX_UNIT_PATTERNS} unit patterns`)
  .transform((patterns) => [...new Set(patterns.filter((p) => p.length > 0))]);

// Only the type here: the policy (12–1024 characters, not the name…) needs the user name.
const passwordSchema = z.string({ error: "password must be a string" });

/** The store's password rules, reported on the `password` field. */
function checkPassword(value: { username: string; password: string }, ctx: z.RefinementCtx): void {
  const problem = passwordProblem(value.password, value.username);
  if (problem) ctx.addIssue({ code: "custom", path: ["password"], message: problem });
}

const createInput = z
  .object({ username: usernameSchema, role: roleSchema, unitPatterns: unitPatternsSchema.default([]), password: passwordSchema })
  .strict()
  .superRefine(checkPassword);

const updateInput = z
  .object({ username: usernameSchema, role: roleSchema.optional(), unitPatterns: unitPatternsSchema.optional() })
  .strict()
  .refine((v) => v.role !== undefined || v.unitPatterns !== undefined, { message: "nothing to change: give a role and/or unit patterns" });

const setDisabledInput = z.object({ username: usernameSchema, disabled: z.boolean({ error: "disabled must be true or false" }) }).strict();

const resetPasswordInput = z.object({ username: usernameSchema, password: passwordSchema }).strict().superRefine(checkPassword);

const AUTH_ERROR_CODES: Partial<Record<AuthErrorCode, TRPCError["code"]>> = {
  "user-exists": "CONFLICT",
  "user-not-found": "NOT_FOUND",
  "last-admin": "CONFLICT",
};

/** A store refusal as a tRPC error with the store's (user-safe) message. */
function fromAuthError(err: unknown): unknown {
  if (!(err instanceof AuthError)) return err;
  const message = err.code === "last-admin" ? `${sentence(err.message).slice(0, -1)}: make another user an admin first.` : sentence(err.message);
  return new TRPCError({ code: AUTH_ERROR_CODES[err.code] ?? "BAD_REQUEST", message, cause: err });
}

/**
 * The target's name for a refusal's audit row: only a valid user name, and never one that is the
 * password sent with it (the refusal may be exactly "password must not be the username").
 */
function auditableTarget(raw: Record<string, unknown>): string | null {
  if (typeof raw.username !== "string") return null;
  const name = raw.username.trim();
  if (usernameProblem(name) !== null) return null;
  if (typeof raw.password === "string" && raw.password.normalize("NFC").trim().toLowerCase() === name.toLowerCase()) return null;
  return name;
}

const unitsText = (patterns: readonly string[]) => (patterns.length ? patterns.join(",") : "(none)");

const demoRefused = () => new TRPCError({ code: "BAD_REQUEST", message: DEMO_MESSAGE });

/** Demo mode has no users; otherwise admins only. */
function requireAdmin(ctx: { actor: Actor | null; panelRequest: PanelRequest; services: { demo: boolean; auth: PanelAuth } }): Actor {
  if (ctx.services.demo) throw demoRefused();
  if (!ctx.actor) throw notSignedIn(ctx.panelRequest);
  const decision = can(ctx.actor, "users.manage", null, ctx.services.auth.authorization);
  if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
  return ctx.actor;
}

/**
 * A user-changing mutation. Outermost (`audited`): whatever refuses the call below (no session,
 * not an admin, input that fails validation, a store rule) is audited under `action`, with the
 * target's name when it is a valid user name — never the password.
 */
function change(action: string | ((raw: Record<string, unknown>) => string)) {
  return audited((raw) => {
    const target = auditableTarget(raw);
    return { action: typeof action === "string" ? action : action(raw), detailPrefix: target ? `user=${target}: ` : "", host: null };
  }).use(({ ctx, next }) => next({ ctx: { actor: requireAdmin(ctx) } }));
}

async function lastSignIn(auth: PanelAuth, username: string): Promise<number | null> {
  let latest: number | null = null;
  for (const action of ["login", "setup"]) {
    const row = (await auth.audit.queryAudit({ user: username, action, outcome: "ok", limit: 1 }))[0];
    if (row && (latest === null || row.at > latest)) latest = row.at;
  }
  return latest;
}

const view = async (auth: PanelAuth, u: User): Promise<PanelUser> => ({
  name: u.username,
  role: u.role,
  unitPatterns: [...u.unitPatterns],
  disabled: u.disabled,
  hasPassword: u.hasPassword,
  source: u.source,
  createdAt: u.createdAt,
  passwordChangedAt: u.passwordChangedAt,
  twoFactor: await auth.twoFactor.isEnabled(u.id),
  lastSignInAt: await lastSignIn(auth, u.username),
});

/** The target user, or NOT_FOUND. */
async function existing(auth: PanelAuth, username: string): Promise<User> {
  const user = await auth.users.getUser(username);
  if (!user) throw new TRPCError({ code: "NOT_FOUND", message: `There is no user named '${username}'.` });
  return user;
}

/** Is `user` the account making this request? (A proxy identity matches by name.) */
function isSelf(ctx: { actor: Actor; panelRequest: PanelRequest }, user: User): boolean {
  const principal = ctx.panelRequest.principal;
  if (principal?.userId != null) return principal.userId === user.id;
  return ctx.actor.user.toLowerCase() === user.username.toLowerCase();
}

type ChangeContext = { actor: Actor; panelRequest: PanelRequest; services: { auth: PanelAuth }; audit: { recorded: boolean } };

async function record(ctx: ChangeContext, action: string, detail: string): Promise<void> {
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

async function store<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw fromAuthError(err);
  }
}

export const usersRouter = router({
  /** Every user, by name; never a password hash. */
  list: panelProcedure
    .use(async ({ ctx, next }) => {
      const { services, actor } = ctx;
      if (services.demo) throw demoRefused();
      if (!actor) throw notSignedIn(ctx.panelRequest);
      const decision = can(actor, "users.manage", null, services.auth.authorization);
      if (!decision.allowed) {
        await services.refusals.record(ctx.panelRequest, actor, {
          action: "user.list",
          unit: null,
          reason: null,
          outcome: "refused",
          detail: decision.reason,
          host: null,
        });
        throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
      }
      return next();
    })
    .query(async ({ ctx }) => Promise.all((await ctx.services.auth.users.listUsers()).map((u) => view(ctx.services.auth, u)))),
  create: change("user.add")
    .input(createInput)
    .mutation(async ({ input, ctx }) => {
      if (await ctx.services.auth.users.getUser(input.username))
        throw new TRPCError({ code: "CONFLICT", message: `A user named '${input.username}' already exists.` });
      const user = await store(() =>
        ctx.services.auth.users.createUser({ username: input.username, password: input.password, role: input.role, unitPatterns: input.unitPatterns }),
      );
      await record(ctx, "user.add", `user=${user.username} role=${user.role} units=${unitsText(user.unitPatterns)}`);
      return view(ctx.services.auth, user);
    }),

  update: change("user.update")
    .input(updateInput)
    .mutation(async ({ input, ctx }) => {
      const before = await existing(ctx.services.auth, input.username);
      if (input.role !== undefined && input.role !== before.role && isSelf(ctx, before)) {
        throw new TRPCError({ code: "FORBIDDEN", message: "You cannot change your own role; another admin has to." });
      }
      const after = await store(() => ctx.services.auth.users.updateUser(before.username, { role: input.role, unitPatterns: input.unitPatterns }));
      const changes: string[] = [];
      if (after.role !== before.role) changes.push(`role ${before.role}→${after.role}`);
      if (unitsText(after.unitPatterns) !== unitsText(before.unitPatterns))
        changes.push(`units ${unitsText(before.unitPatterns)}→${unitsText(after.unitPatterns)}`);
      // their open live streams re-check what they may still see (other replicas: the `sessions` event)
      if (changes.length) ctx.services.streams.changed({ userId: after.id, username: after.username });
      await record(ctx, "user.update", `user=${after.username} ${changes.length ? changes.join(" ") : "no change"}`);
      return view(ctx.services.auth, after);
    }),

  setDisabled: change((raw) => (raw.disabled === false ? "user.enable" : "user.disable"))
    .input(setDisabledInput)
    .mutation(async ({ input, ctx }) => {
      const before = await existing(ctx.services.auth, input.username);
      if (input.disabled && isSelf(ctx, before)) {
        throw new TRPCError({ code: "FORBIDDEN", message: "You cannot disable your own account; another admin has to." });
      }
      const after = await store(() => ctx.services.auth.users.setDisabled(before.username, input.disabled));
      // open live streams of that user end now, not at their next periodic check
      if (input.disabled) ctx.services.streams.changed();
      const note = before.disabled === input.disabled ? ` (was already ${input.disabled ? "disabled" : "enabled"})` : "";
      await record(ctx, input.disabled ? "user.disable" : "user.enable", `user=${after.username}${input.disabled ? " sessions ended" : ""}${note}`);
      return view(ctx.services.auth, after);
    }),

  resetPassword: change("user.passwd")
    .input(resetPasswordInput)
    .mutation(async ({ input, ctx }) => {
      const before = await existing(ctx.services.auth, input.username);
      if (isSelf(ctx, before)) {
        throw new TRPCError({ code: "FORBIDDEN", message: "Change your own password on the account page; it asks for the current one." });
      }
      const after = await store(() => ctx.services.auth.users.setPassword(before.username, input.password));
      ctx.services.streams.changed();
      await record(ctx, "user.passwd", `user=${after.username} sessions ended`);
      return view(ctx.services.auth, after);
    }),

  /** Turn someone's two-factor sign-in off (a lost phone): they sign in with the password, and set it up again. */
  resetTwoFactor: change("user.2fa.reset")
    .input(z.object({ username: usernameSchema }).strict())
    .mutation(async ({ input, ctx }) => {
      const user = await existing(ctx.services.auth, input.username);
      if (isSelf(ctx, user)) {
        throw new TRPCError({ code: "FORBIDDEN", message: "Turn your own two-factor sign-in off on the account page; it asks for your password and a code." });
      }
      const removed = await ctx.services.auth.twoFactor.remove(user.id);
      await record(ctx, "user.2fa.reset", `user=${user.username} ${removed ? "two-factor sign-in reset" : "had no two-factor sign-in"}`);
      return view(ctx.services.auth, user);
    }),
});
