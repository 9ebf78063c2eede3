/**
 * Web Push on the wire: what the browser sends (`PushSubscription.toJSON()` as it is), what the
 * panel answers, and the notification's JSON that the service worker (public/sw.js) shows.
 */
import { z } from "zod";

/** base64url without padding, as browsers write subscription keys */
const b64url = (what: string, max: number) =>
  z
    .string()
    .min(1, `${what} is empty`)
    .max(max, `${what} is too long`)
    .regex(/^[A-Za-z0-9_-]+=*$/, `${what} must be base64url`);

export const PUSH_ENDPOINT_MAX = 2048;

/** `PushSubscription.toJSON()`: endpoint, expirationTime, keys { p256dh, auth }. */
export const pushSubscriptionJson = z
  .object({
    endpoint: z.string().min(1).max(PUSH_ENDPOINT_MAX, `endpoint is longer than ${PUSH_ENDPOINT_MAX} characters`),
    expirationTime: z.number().nullable().optional(),
    keys: z.object({ p256dh: b64url("keys.p256dh", 200), auth: b64url("keys.auth", 100) }).strict(),
  })
  .strict();
export type PushSubscriptionJson = z.infer<typeof pushSubscriptionJson>;

export const pushSubscribeInput = z.object({ subscription: pushSubscriptionJson }).strict();
export const pushUnsubscribeInput = z.object({ endpoint: z.string().min(1).max(PUSH_ENDPOINT_MAX) }).strict();

/** One of the caller's subscribed browsers, as the Account page lists them. */
export interface PushDeviceView {
  id: number;
  /** the push service's origin, e.g. "https://fcm.googleapis.com" (never the full endpoint) */
  service: string;
  userAgent: string | null;
  createdAtMs: number;
  lastOkAtMs: number | null;
  lastError: string | null;
}

/** What a phone shows: the JSON inside each push message (`gpudeck.push.v1`). */
export interface PushNotificationPayload {
  schema: "gpudeck.push.v1";
  /** as the alert message's (`AlertWebhookPayload.kind`): an escalation offers "Acknowledge" too */
  kind: "alert" | "test" | "acknowledged" | "escalation";
  state: "firing" | "resolved";
  /** "gpu-b: vllm-kimi-k25.service failed" */
  title: string;
  /** the alert's headline: the diagnosis sentence, else the alert's summary */
  body: string;
  host: string | null;
  unit: string | null;
  /** the unit's page (the host's for host alerts and groups), a path on the panel: "/hosts/gpu-b/units/x.service" */
  url: string;
  /** the alert, for "Acknowledge" (alerts.ack { id }); null for groups and tests */
  alertId: number | null;
  /** notifications with one tag replace each other (the end of an alert replaces its start) */
  tag: string;
  /** the message's id (receivers de-duplicate on it) */
  id: string;
}
