/**
 * What a phone shows: an alert message (gpudeck.alert.v1) made into the notification's JSON
 * (gpudeck.push.v1, ../contract/push.ts), kept under what push services carry (4 KiB of
 * ciphertext: the plaintext here is at most MAX_PLAINTEXT_BYTES, texts cut to fit).
 */
import type { AlertWebhookPayload } from "../contract/alerts";
import type { PushNotificationPayload } from "../contract/push";
import { alreadyAcknowledged } from "../alerts/message";

export const MAX_PLAINTEXT_BYTES = 3000;
const TITLE_MAX = 120;
const BODY_MAX = 600;

const cut = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);

/** "https://panel.example/hosts/gpu-b/units/x" → "/hosts/gpu-b/units/x" (the service worker opens it on its own origin). */
export function panelPath(link: string): string {
  try {
    const u = new URL(link);
    return `${u.pathname}${u.search}` || "/";
  } catch {
    return "/";
  }
}

export function pushPayload(p: AlertWebhookPayload): PushNotificationPayload {
  // an escalation is the same alert again, unacknowledged: it offers "Acknowledge" as the start did
  const single = (p.kind === "alert" || p.kind === "escalation") && p.count === 1;
  const headline = single ? (p.diagnosis?.headline ?? p.summary) : p.summary;
  // a start told after someone took it (inside the grouping window): it says who, and offers no "Acknowledge"
  const acked = p.kind === "alert" && p.state === "firing" && single ? alreadyAcknowledged(p) : null;
  const body =
    p.kind === "test"
      ? p.summary
      : p.state === "resolved" && single
        ? `Resolved. ${headline}`
        : acked
          ? `${cut(headline, BODY_MAX - acked.length - 1)} ${acked}`
          : headline;
  const out: PushNotificationPayload = {
    schema: "gpudeck.push.v1",
    kind: p.kind,
    state: p.state,
    title: cut(p.title, TITLE_MAX),
    body: cut(body, BODY_MAX),
    host: p.kind === "test" ? null : p.host,
    unit: p.kind === "test" ? null : p.unit,
    url: panelPath(p.link),
    alertId: single && p.state === "firing" && p.alertId > 0 && !acked ? p.alertId : null,
    tag: single ? `gpudeck-alert-${p.alertId}` : `gpudeck-${p.host}-${p.rule}`,
    id: p.id,
  };
  // a unit name and a host name are short (systemd: 256); the body is what gives way
  while (Buffer.byteLength(JSON.stringify(out)) > MAX_PLAINTEXT_BYTES && out.body.length > 20) out.body = cut(out.body, Math.floor(out.body.length * 0.8));
  return out;
}

/** Web Push's Urgency header: critical starts wake the phone, ends and tests do not, nor a start someone already acknowledged. */
export function urgencyOf(p: AlertWebhookPayload): "high" | "normal" | "low" {
  if (p.kind === "test") return "normal";
  if (p.state === "resolved") return "low";
  if (p.kind === "alert" && p.count === 1 && p.acknowledgedBy) return "normal";
  return p.severity === "critical" ? "high" : "normal";
}
