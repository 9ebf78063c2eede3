/** Small helpers shared by the sign-in, setup and account pages. */

/**
 * Where to go after signing in: only a path on this site. "//evil.example", "/\\evil" and
 * absolute URLs would leave it (open redirect), so they fall back to "/".
 */
export function safeNextPath(value: string | null | undefined): string {
  if (!value || value.length > 2000) return "/";
  if (!value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return "/";
  if (/[\u0000-\u001f]/.test(value)) return "/";
  if (value.startsWith("/login") || value.startsWith("/setup")) return "/";
  return value;
}

export const PASSWORD_HINT = "At least 12 characters; not your user name. A passphrase of a few words works well.";

export const inputClass =
  "block w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm shadow-sm focus:border-blue-600 focus:outline-none focus:ring-2 focus:ring-blue-600/30 dark:border-zinc-700 dark:bg-zinc-900";

export const buttonClass = "min-h-11 rounded-md bg-blue-700 px-4 py-2 text-sm font-semibold text-white shadow-sm hover:bg-blue-800 disabled:opacity-50";

/**
 * Navigate with a full page load, not a client-side transition: after signing in or out every
 * cache and the live event stream must start over under the new identity.
 */
export function loadPage(path: string): void {
  window.location.assign(path);
}
