/**
 * Which keys of a config file hold secrets, so the doctor can insist that such a file is not
 * world-readable. token_file / token_env keep the secret elsewhere and do not count.
 */

function at(values: Record<string, unknown>, key: string): unknown {
  let node: unknown = values;
  for (const part of key.split(".")) node = node && typeof node === "object" ? (node as Record<string, unknown>)[part] : undefined;
  return node;
}

const SECRET_KEYS = ["agent.token", "panel.proxy_auth.secret", "status_page.token", "alerts.webhook_url"];

export function secretKeysIn(values: Record<string, unknown>): string[] {
  const found = SECRET_KEYS.filter((k) => at(values, k) !== undefined);
  const db = at(values, "panel.database_url");
  if (typeof db === "string" && /:\/\/[^/@]*:[^/@]*@/.test(db)) found.push("panel.database_url (a password)");
  const hosts = at(values, "hosts");
  if (Array.isArray(hosts)) hosts.forEach((h, i) => (h as Record<string, unknown>).token !== undefined && found.push(`hosts[${i}].token`));
  const channels = at(values, "alerts.channels");
  if (Array.isArray(channels)) {
    channels.forEach((c, i) => {
      const ch = c as Record<string, unknown>;
      for (const k of ["token", "password"]) if (ch[k] !== undefined) found.push(`alerts.channels[${i}].${k}`);
      // Slack and webhook URLs carry their secret in the path
      if ((ch.type === "slack" || ch.type === "webhook") && ch.url !== undefined) found.push(`alerts.channels[${i}].url`);
    });
  }
  return found;
}
