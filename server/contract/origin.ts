/**
 * Where a URL sends what goes with it: scheme, host and port (`smtp://mail.example:587`). A
 * stored secret (an agent token, an ntfy token, an SMTP password) was given for one origin;
 * when an admin changes the URL to another origin the secret must be given again, so whoever
 * may set a URL cannot have the panel hand them a secret they never saw.
 */

/** "https://ntfy.example:8443"; null when the text is not a URL. (`URL.origin` is "null" for smtp:.) */
export function urlOrigin(url: string): string | null {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`.toLowerCase();
  } catch {
    return null;
  }
}

export function sameOrigin(a: string, b: string): boolean {
  const x = urlOrigin(a);
  return x !== null && x === urlOrigin(b);
}

/** The refusal when a URL moves to another origin and `secret` would be kept. */
export function secretMustFollowText(secret: string, field: string, from: string, to: string): string {
  return (
    `The new url goes to ${urlOrigin(to) ?? "another place"}, not ${urlOrigin(from) ?? "where it went"}: give the ${secret} again ` +
    `(${field}) with the new url, so a stored ${secret} is never sent to a place it was not given for.`
  );
}
