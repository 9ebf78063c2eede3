/**
 * Web Push (server/push/): browsers offer push, and install the panel as an app, only to HTTPS
 * sites. Push set up in the config (groups, a subject) with a panel URL that is not https is a
 * warning: nobody will be able to turn notifications on.
 */
import { DEFAULT_PUSH_SUBJECT, type PushConfig } from "../../push/config";
import type { CheckResult } from "../types";

export function checkPush(push: PushConfig, publicUrl: string | null): CheckResult {
  const id = "push notifications";
  if (!push.enabled) return { id, status: "skip", detail: "turned off (panel.push.enabled = false)" };
  const https = publicUrl?.startsWith("https://") ?? false;
  const groups = Object.keys(push.groups);
  const configured = groups.length > 0 || push.subject !== DEFAULT_PUSH_SUBJECT;
  if (https) {
    const what = groups.length ? `; groups ${groups.map((g) => `push:${g}`).join(", ")}` : "";
    return { id, status: "ok", detail: `browsers can subscribe on ${publicUrl}'s Account page (VAPID subject ${push.subject}${what})` };
  }
  if (!configured) return { id, status: "skip", detail: "need the panel on HTTPS (panel.public_url https://…); the Account page says so until then" };
  return {
    id,
    status: "warn",
    detail: `push is configured (${groups.length ? `groups ${groups.join(", ")}` : `subject ${push.subject}`}) but the panel URL is ${publicUrl ?? "not set"}: browsers offer push notifications and the installable app only to HTTPS sites`,
    fix: "put the panel behind a TLS reverse proxy and set panel.public_url to its https:// URL",
  };
}
