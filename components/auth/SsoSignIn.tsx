"use client";
/**
 * Single sign-on on the sign-in page: the "Sign in with <name>" button (to /api/auth/oidc/login)
 * and, after a refused sign-in
 * (`/login?error=<code>`), the sentence that says why. The sentence comes from the contract's
 * table, never from the URL.
 */
import { OIDC_REFUSALS, isOidcRefusal } from "@/server/contract/oidc";
import { buttonClass, loadPage } from "./shared";

export function SsoRefusal({ code }: { code: string | null }) {
  if (!isOidcRefusal(code)) return null;
  return (
    <p
      role="alert"
      data-testid="sso-error"
      className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-200"
    >
      {OIDC_REFUSALS[code]}
    </p>
  );
}

export function SsoButton({ name, loginPath, next, alone }: { name: string; loginPath: string; next: string; alone: boolean }) {
  // a navigation, not a form: the panel's CSP (form-action 'self') would stop a form's redirect to the provider
  return (
    <div className="space-y-2">
      <button type="button" className={`${buttonClass} w-full`} onClick={() => loadPage(`${loginPath}?next=${encodeURIComponent(next)}`)}>
        Sign in with {name}
      </button>
      {!alone && <p className="text-center text-xs text-zinc-500 dark:text-zinc-400">or with a gpudeck account:</p>}
    </div>
  );
}
