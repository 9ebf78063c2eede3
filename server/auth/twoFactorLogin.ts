/**
 * The second step of a sign-in with two factors: the password was right (PanelAuth.login answered
 * `two-factor` with a challenge), and now the code. Rate-limited in the same buckets as passwords
 * (a wrong code counts like a wrong password; only a right code clears them), audited either way,
 * and the session is made only when the code is right.
 */
import type { PanelAuth, RequestMeta } from "./panelAuth";
import type { SessionInfo } from "./sessions";
import { CHALLENGE_MAX_FAILURES } from "./totp";
import type { Ms, User } from "./types";

export type TwoFactorLoginResult =
  | { ok: true; user: User; sessionId: string; session: SessionInfo; setCookie: string; recoveryCodesLeft: number | null }
  | {
      ok: false;
      /** expired: the challenge is unknown, timed out or used up (sign in with the password again) */
      reason: "expired" | "rate-limited" | "wrong-code";
      message: string;
      retryAfterMs?: Ms;
    };

const EXPIRED = "this sign-in has timed out or had too many wrong codes; enter your password again";

export async function completeTwoFactorLogin(
  auth: PanelAuth,
  input: { challenge: unknown; code: unknown; secure: boolean } & RequestMeta,
): Promise<TwoFactorLoginResult> {
  const userId = await auth.twoFactor.challengeUser(input.challenge);
  const user = userId === null ? null : await auth.users.getUserById(userId);
  if (!user || user.disabled) return { ok: false, reason: "expired", message: EXPIRED };
  const challenge = input.challenge as string;
  const attempt = await auth.limiter.attempt(user.username, input.sourceAddr);
  const base = { user: user.username, role: user.role, sourceAddr: input.sourceAddr, host: null, unit: null, action: "login" };
  if (!attempt.allowed) {
    await auth.audit.recordAudit({ ...base, reason: `rate limited (${attempt.scope}, two-factor code)`, outcome: "refused" });
    const minutes = Math.max(1, Math.ceil(attempt.retryAfterMs / 60_000));
    return {
      ok: false,
      reason: "rate-limited",
      message: `too many wrong codes or passwords for this account; try again in ${minutes} min`,
      retryAfterMs: attempt.retryAfterMs,
    };
  }
  const check = await auth.twoFactor.verify(user.id, typeof input.code === "string" ? input.code.trim() : input.code);
  if (!check.ok) {
    const left = await auth.twoFactor.challengeFailed(challenge);
    await auth.audit.recordAudit({ ...base, reason: "wrong-2fa-code", outcome: "refused" });
    return {
      ok: false,
      reason: left === 0 ? "expired" : "wrong-code",
      message:
        left === 0
          ? `${CHALLENGE_MAX_FAILURES} wrong codes: enter your password again`
          : `wrong code: type the 6 digits your authenticator app shows now for gpudeck (a code works once), or a recovery code (${left} ${left === 1 ? "try" : "tries"} left)`,
    };
  }
  await attempt.succeeded();
  await auth.twoFactor.endChallenge(challenge);
  const { id, session } = await auth.startSession(user, input);
  await auth.audit.recordAudit({
    ...base,
    reason: null,
    outcome: "ok",
    detail: check.method === "totp" ? "two-factor: authenticator code" : `two-factor: recovery code (${check.recoveryCodesLeft} left)`,
  });
  return {
    ok: true,
    user,
    sessionId: id,
    session,
    setCookie: auth.cookieFor(id, session, input),
    recoveryCodesLeft: check.method === "recovery" ? check.recoveryCodesLeft : null,
  };
}
