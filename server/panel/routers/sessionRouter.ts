/**
 * `session.*`: who am I, sign in, sign out, change my password. `me`, `login` and `logout` are
 * public; a browser signing in again drops its previous session rather than leaving it valid.
 */
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { completeTwoFactorLogin } from "../../auth/twoFactorLogin";
import { AuthError } from "../../auth/types";
import type { Actor } from "../../contract/actors";
import { OIDC_LOGIN_PATH } from "../../contract/oidc";
import { router } from "../../trpc";
import { panelProcedure, signedInProcedure } from "../trpc";

const usernameInput = z.string().max(256);
const passwordInput = z.string().max(2048);

export const publicUser = (p: { username: string; role: string; unitPatterns: readonly string[] }, via: string) => ({
  name: p.username,
  role: p.role as Actor["role"],
  unitPatterns: [...p.unitPatterns],
  via,
});

export const sessionRouter = router({
  /**
   * Who am I? Public: null user when signed out, with why and whether first-run setup is pending.
   * `unavailable`: the panel cannot reach its database (the sentence to show on every page, e.g.
   * as a banner: sign-in, changes and actions are refused until it is back); null normally.
   */
  me: panelProcedure.query(async ({ ctx }) => {
    const { panelRequest: req, services } = ctx;
    if (services.demo)
      return {
        user: publicUser({ username: "demo", role: "admin", unitPatterns: [] }, "demo"),
        demo: true,
        setupPending: false,
        signedOutReason: null,
        unavailable: null,
        twoFactorEnrolment: false,
      };
    if (req.unavailable)
      return { user: null, demo: false, setupPending: false, signedOutReason: req.unavailable, unavailable: req.unavailable, twoFactorEnrolment: false };
    // signed in, but their role must use two factors and they have not set it up: the UI sends them to the Account page
    if (req.twoFactorEnrolment)
      return {
        user: publicUser(req.twoFactorEnrolment, "session"),
        demo: false,
        setupPending: false,
        signedOutReason: null,
        unavailable: null,
        twoFactorEnrolment: true,
      };
    if (!ctx.actor || !req.principal) {
      const setupPending = (await services.auth.users.setupPending()) || (await services.auth.users.countActiveAdmins()) === 0;
      return { user: null, demo: false, setupPending, signedOutReason: req.authRefusal, unavailable: null, twoFactorEnrolment: false };
    }
    return {
      user: publicUser(req.principal, req.principal.via),
      demo: false,
      setupPending: false,
      signedOutReason: null,
      unavailable: null,
      twoFactorEnrolment: false,
    };
  }),

  /** How one signs in here: single sign-on's button (its label and route) and whether the password form is shown. Public. */
  signInOptions: panelProcedure.query(({ ctx }) => {
    const oidc = ctx.services.oidc;
    return {
      sso: oidc ? { name: oidc.config.name, loginPath: OIDC_LOGIN_PATH } : null,
      localLogin: oidc ? oidc.config.localLogin : true,
    };
  }),

  login: panelProcedure.input(z.object({ username: usernameInput, password: passwordInput }).strict()).mutation(async ({ input, ctx }) => {
    const { panelRequest: req, services } = ctx;
    if (services.demo) throw new TRPCError({ code: "BAD_REQUEST", message: "Demo mode has no sign-in: everyone is the demo admin." });
    const result = await services.auth.login({ ...input, secure: req.secure, sourceAddr: req.sourceAddr, userAgent: req.userAgent });
    // the password was right and the account has two-factor sign-in: no session until the code (loginCode)
    if (!result.ok && result.reason === "two-factor") return { user: null, twoFactor: { challenge: result.challenge } };
    if (!result.ok) {
      if (result.reason === "rate-limited") {
        const seconds = Math.max(1, Math.ceil((result.retryAfterMs ?? 60_000) / 1000));
        req.resHeaders.set("Retry-After", String(seconds));
        throw new TRPCError({ code: "TOO_MANY_REQUESTS", message: `${result.message[0]!.toUpperCase()}${result.message.slice(1)}.` });
      }
      throw new TRPCError({ code: "UNAUTHORIZED", message: "Invalid username or password." });
    }
    if (req.sessionId) await services.auth.sessions.endSession(req.sessionId);
    req.resHeaders.append("Set-Cookie", result.setCookie);
    return { user: publicUser(result.user, "session"), twoFactor: null };
  }),

  /**
   * The second step of a sign-in with two-factor: the challenge `login` answered and a code from
   * the authenticator app (or a recovery code). Rate-limited with the passwords; the session
   * starts only when the code is right.
   */
  loginCode: panelProcedure.input(z.object({ challenge: z.string().max(64), code: z.string().max(64) }).strict()).mutation(async ({ input, ctx }) => {
    const { panelRequest: req, services } = ctx;
    if (services.demo) throw new TRPCError({ code: "BAD_REQUEST", message: "Demo mode has no sign-in: everyone is the demo admin." });
    const result = await completeTwoFactorLogin(services.auth, { ...input, secure: req.secure, sourceAddr: req.sourceAddr, userAgent: req.userAgent });
    if (!result.ok) {
      const message = `${result.message[0]!.toUpperCase()}${result.message.slice(1)}.`;
      if (result.reason === "rate-limited") {
        req.resHeaders.set("Retry-After", String(Math.max(1, Math.ceil((result.retryAfterMs ?? 60_000) / 1000))));
        throw new TRPCError({ code: "TOO_MANY_REQUESTS", message });
      }
      // expired: the browser asks for the password again (PRECONDITION_FAILED tells it so)
      throw new TRPCError({ code: result.reason === "expired" ? "PRECONDITION_FAILED" : "UNAUTHORIZED", message });
    }
    if (req.sessionId) await services.auth.sessions.endSession(req.sessionId);
    req.resHeaders.append("Set-Cookie", result.setCookie);
    return { user: publicUser(result.user, "session"), recoveryCodesLeft: result.recoveryCodesLeft };
  }),

  logout: panelProcedure.mutation(async ({ ctx }) => {
    const { panelRequest: req, services } = ctx;
    if (services.demo) return { ended: false, endSessionUrl: null };
    if (req.unavailable) throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: req.unavailable });
    // signed in through the provider: end its session too, where it has an end_session_endpoint
    const userId = req.principal?.userId ?? null;
    const fromProvider = services.oidc !== null && userId !== null && (await services.auth.users.getUserById(userId))?.source === "oidc";
    const endSessionUrl = fromProvider ? await services.oidc!.endSessionUrl(req.sessionId) : null;
    const { ended, setCookie } = await services.auth.logout({
      sessionId: req.sessionId,
      secure: req.secure,
      sourceAddr: req.sourceAddr,
      userAgent: req.userAgent,
    });
    req.resHeaders.append("Set-Cookie", setCookie);
    services.streams.changed();
    return { ended, endSessionUrl };
  }),

  changePassword: signedInProcedure
    .input(z.object({ currentPassword: passwordInput, newPassword: passwordInput }).strict())
    .mutation(async ({ input, ctx }) => {
      const { panelRequest: req, services } = ctx;
      const principal = req.principal;
      if (services.demo || !principal || principal.userId === null || !req.sessionId) {
        throw new TRPCError({ code: "BAD_REQUEST", message: "This identity has no panel password to change (demo mode or reverse-proxy sign-in)." });
      }
      // The current password is a credential: guessing it is throttled like sign-in.
      const attempt = await services.auth.limiter.attempt(principal.username, req.sourceAddr);
      if (!attempt.allowed) {
        throw new TRPCError({
          code: "TOO_MANY_REQUESTS",
          message: `Too many wrong passwords; try again in ${Math.max(1, Math.ceil(attempt.retryAfterMs / 60_000))} min.`,
        });
      }
      try {
        const result = await services.auth.changeOwnPassword({
          userId: principal.userId,
          currentPassword: input.currentPassword,
          newPassword: input.newPassword,
          secure: req.secure,
          sourceAddr: req.sourceAddr,
          userAgent: req.userAgent,
        });
        await attempt.succeeded();
        req.resHeaders.append("Set-Cookie", result.setCookie);
        services.streams.changed(); // other browsers' streams end now
        return { ok: true as const };
      } catch (err) {
        if (err instanceof AuthError) throw new TRPCError({ code: "BAD_REQUEST", message: err.message });
        throw err;
      }
    }),
});
