/**
 * Filters live in the URL so a link or a reload keeps them. They change only what the client
 * shows, so the URL is replaced in place (Next's app router syncs useSearchParams with
 * history.replaceState) rather than with router.replace, which would fetch the route from the
 * server on every keystroke and, on a slow phone, can lag the text box behind the typing.
 */
export function replaceSearch(pathname: string, params: URLSearchParams): void {
  const qs = params.toString();
  // state must be null: Next leaves calls that carry its own history state out of the sync
  window.history.replaceState(null, "", qs ? `${pathname}?${qs}` : pathname);
}
