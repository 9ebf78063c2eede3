/** A failed send, with a message that is safe to store and show: never a channel's URL path, token or password. */
export class DeliveryError extends Error {}

/** Whatever an error text says, no URL in it keeps its path or query (where webhook tokens live). */
export function redactUrls(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/[^/\s?#]+)[^\s]*/gi, "$1/…").slice(0, 500);
}
