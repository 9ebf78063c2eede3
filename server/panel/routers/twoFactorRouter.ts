/**
 * `twoFactor.*`: a local account's TOTP second factor (server/auth/totp.ts), on the Account page.
 * - `status`; `begin` (a new secret: QR code and the secret as text); `enable { code }` (the first
 *   code from the app turns it on and answers the recovery codes, once); `disable { password,
 *   code }` (both, rate-limited like sign-in); `renewRecoveryCodes { password, code }` (the same
 *   checks; new codes, shown once, the old ones void). Admins reset someone else's with
 *   `users.resetTwoFactor`.
 * - For the person in a browser session only: not API tokens, not the reverse proxy's identities,
 *   not single sign-on users (their identity provider does MFA).
 * - A session that must enrol first (panel.require_2fa_for: `panelRequest.twoFactorEnrolment`)
 *   may call `status`, `begin` and `enable`, and nothing else in the panel.
 * - Turning it on and off, new recovery codes, and every refusal of those, are audited
 *   (`user.2fa.enable`, `user.2fa.disable`, `user.2fa.recovery-codes`).
 */
import { TRPCError } from "@trpc/server";
import QRCode from "qrcode";
import { z } from "zod";
import { AuthError, type User } from "../../auth/types";
import { router } from "../../trpc";
import { audited, notSignedIn, panelProcedure, type PanelRequest, type PanelServices } from "../trpc";

const SSO_MFA = "You sign in through single sign-on: your identity provider asks for the second factor, not gpudeck.";
const codeInput = z.string().trim().min(1, "type the code").max(64);

/** The local account in this browser session (signed in, or enrolling), or why it cannot have a second factor. */
async function sessionUser(req: PanelRequest, services: PanelServices, allow: { oidc?: boolean } = {}) {
  if (services.demo) throw new TRPCError({ code: "BAD_REQUEST", message: "Demo mode has no sign-in, so no two-factor sign-in." });
  const p = req.principal ?? req.twoFactorEnrolment ?? null;
  if (!p) throw notSignedIn(req);
  if (p.via !== "session" || p.userId === null || !req.sessionId)
    throw new TRPCError({
      code: "FORBIDDEN",
      message: "Two-factor sign-in is set up from a signed-in browser (not with an API token or through the reverse proxy).",
    });
  const user = await services.auth.users.getUserById(p.userId);
  if (!user) throw notSignedIn(req);
  if (user.source === "oidc" && !allow.oidc) throw new TRPCError({ code: "BAD_REQUEST", message: SSO_MFA });
  return user;
}

async function record(
  req: PanelRequest,
  services: PanelServices,
  user: { username: string; role: string },
  action: string,
  detail: string,
  audit: { recorded: boolean },
) {
  await services.auth.audit.recordAudit({
    user: user.username,
    role: user.role,
    sourceAddr: req.sourceAddr,
    host: null,
    unit: null,
    action,
    reason: null,
    outcome: "ok",
    detail,
  });
  audit.recorded = true;
}

/** Password and a current code (or a recovery code), throttled like sign-in: they are credentials. */
async function checkPasswordAndCode(
  req: PanelRequest,
  services: PanelServices,
  user: { id: number; username: string },
  input: { password: string; code: string },
): Promise<void> {
  const attempt = await services.auth.limiter.attempt(user.username, req.sourceAddr);
  if (!attempt.allowed)
    throw new TRPCError({
      code: "TOO_MANY_REQUESTS",
      message: `Too many wrong passwords or codes; try again in ${Math.max(1, Math.ceil(attempt.retryAfterMs / 60_000))} min.`,
    });
  const password = await services.auth.users.verifyCredentials(user.username, input.password);
  if (!password.ok) throw new TRPCError({ code: "UNAUTHORIZED", message: "Wrong password." });
  const code = await services.auth.twoFactor.verify(user.id, input.code);
  if (!code.ok) throw new TRPCError({ code: "UNAUTHORIZED", message: "Wrong code: type the 6 digits your authenticator app shows now, or a recovery code." });
  await attempt.succeeded();
}

/**
 * The prologue `disable` and `renewRecoveryCodes` share: the signed-in (not enrolling) session's
 * local account, refused first by `refuse` (a rule of the procedure's own), then its password and
 * a current code (throttled like sign-in).
 */
async function provenUser(
  req: PanelRequest,
  services: PanelServices,
  input: { password: string; code: string },
  refuse: (user: User) => TRPCError | null = () => null,
) {
  const user = await sessionUser(req, services);
  if (!req.principal) throw notSignedIn(req);
  const refusal = refuse(user);
  if (refusal) throw refusal;
  await checkPasswordAndCode(req, services, user, input);
  return user;
}

const provenInput = z.object({ password: z.string().max(2048), code: codeInput }).strict();

const fromAuthError = (err: unknown) =>
  err instanceof AuthError ? new TRPCError({ code: "BAD_REQUEST", message: `${err.message[0]!.toUpperCase()}${err.message.slice(1)}.`, cause: err }) : err;

export const twoFactorRouter = router({
  /** Whether it is on; `available` false (with why) for accounts it is not for (single sign-on). */
  status: panelProcedure.query(async ({ ctx }) => {
    const user = await sessionUser(ctx.panelRequest, ctx.services, { oidc: true });
    if (user.source === "oidc")
      return { available: false, why: SSO_MFA, enabled: false, pending: false, enabledAt: null, recoveryCodesLeft: 0, required: false };
    const required = ctx.services.auth.requireTwoFactorFor.includes(user.role);
    return { available: true, why: null, ...(await ctx.services.auth.twoFactor.status(user.id)), required };
  }),

  /** A new secret for the authenticator app (starting over any set-up not yet confirmed); on only after `enable`. */
  begin: panelProcedure.mutation(async ({ ctx }) => {
    const user = await sessionUser(ctx.panelRequest, ctx.services);
    try {
      const { secret, otpauthUrl } = await ctx.services.auth.twoFactor.begin(user.id, user.username);
      const qrDataUrl = await QRCode.toDataURL(otpauthUrl, { errorCorrectionLevel: "M", margin: 2, width: 224 });
      return { secret, otpauthUrl, qrDataUrl };
    } catch (err) {
      throw fromAuthError(err);
    }
  }),

  enable: audited(() => ({ action: "user.2fa.enable", host: null }))
    .input(z.object({ code: codeInput }).strict())
    .mutation(async ({ input, ctx }) => {
      const { panelRequest: req, services } = ctx;
      const user = await sessionUser(req, services);
      let recoveryCodes: string[];
      try {
        ({ recoveryCodes } = await services.auth.twoFactor.confirm(user.id, input.code));
      } catch (err) {
        throw fromAuthError(err);
      }
      await record(req, services, user, "user.2fa.enable", `user=${user.username} two-factor sign-in on (${recoveryCodes.length} recovery codes)`, ctx.audit);
      return { recoveryCodes };
    }),

  disable: audited(() => ({ action: "user.2fa.disable", host: null }))
    .input(provenInput)
    .mutation(async ({ input, ctx }) => {
      const { panelRequest: req, services } = ctx;
      const user = await provenUser(req, services, input, ({ role }) =>
        services.auth.requireTwoFactorFor.includes(role)
          ? new TRPCError({
              code: "FORBIDDEN",
              message: `Your role (${role}) must sign in with two factors (panel.require_2fa_for); an admin can reset yours if you lost the device.`,
            })
          : null,
      );
      await services.auth.twoFactor.remove(user.id);
      await record(req, services, user, "user.2fa.disable", `user=${user.username} two-factor sign-in off`, ctx.audit);
      return { ok: true as const };
    }),
  renewRecoveryCodes: audited(() => ({ action: "user.2fa.recovery-codes", host: null }))
    .input(provenInput)
    .mutation(async ({ input, ctx }) => {
      const { panelRequest: req, services } = ctx;
      const user = await provenUser(req, services, input);
      let recoveryCodes: string[];
      try {
        ({ recoveryCodes } = await services.auth.twoFactor.renewRecoveryCodes(user.id));
      } catch (err) {
        throw fromAuthError(err);
      }
      await record(
        req,
        services,
        user,
        "user.2fa.recovery-codes",
        `user=${user.username} ${recoveryCodes.length} new recovery codes (the old ones void)`,
        ctx.audit,
      );
      return { recoveryCodes };
    }),
});
