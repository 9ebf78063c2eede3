/**
 * Single sign-on (OIDC): why a sign-in through the identity provider was refused. The panel sends
 * the browser to `/login?error=<code>`, and the sign-in page shows the sentence for that code (never
 * text taken from the URL). Part of the contract: imports nothing else of the project.
 */

export const OIDC_REFUSALS = {
  "no-group": "You are not in any group that may use gpudeck. Ask an administrator to add you to one of the groups in [[panel.oidc.roles]].",
  disabled: "Your gpudeck account is disabled. Ask an administrator to enable it.",
  "bad-state": "The sign-in could not be matched to this browser (it was started elsewhere, took longer than 10 minutes, or cookies are blocked). Start again.",
  replayed: "This sign-in response was used already. Start again.",
  "code-refused": "The identity provider refused the sign-in code (used already or expired). Start again.",
  "wrong-audience": "The identity provider's token was issued for another application (wrong audience). Check panel.oidc.client_id.",
  "wrong-issuer": "The identity provider's token came from another issuer. Check panel.oidc.issuer.",
  "expired-token": "The identity provider's token has expired or is not valid yet. Check the clocks of the panel and the provider, then start again.",
  "bad-token": "The identity provider's token could not be verified (signature or nonce). Start again; if it persists, ask an administrator.",
  "provider-refused": "The identity provider did not sign you in (you cancelled, or it refused).",
  "provider-unreachable": "The identity provider cannot be reached. Try again later; an administrator can run `gpudeck doctor`.",
  "bad-username": "The identity provider sent no usable user name. An administrator must check panel.oidc.username_claim.",
  "local-account": "A local gpudeck account has this name already. An administrator must rename or remove it before you can sign in with single sign-on.",
  "last-admin": "Your groups no longer make you an admin, and you are the last enabled admin. An administrator must make another admin first.",
  "not-configured": "Single sign-on is not configured on this panel.",
  busy: "Too many sign-ins are in progress. Try again in a minute.",
} as const;

export type OidcRefusal = keyof typeof OIDC_REFUSALS;

export function isOidcRefusal(code: unknown): code is OidcRefusal {
  return typeof code === "string" && Object.hasOwn(OIDC_REFUSALS, code);
}

/** The panel's sign-in routes. */
export const OIDC_LOGIN_PATH = "/api/auth/oidc/login";
export const OIDC_CALLBACK_PATH = "/api/auth/oidc/callback";
