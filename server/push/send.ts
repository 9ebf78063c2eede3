/**
 * Sending one push message to one subscribed browser: the request `web-push` prepares (RFC 8291
 * aes128gcm encryption with the subscription's keys, RFC 8292 VAPID signature), sent with the
 * panel's own client through the egress guard (web-push's sendNotification speaks https only,
 * and a test's local push service is plain http on 127.0.0.1). 404 and 410 say the subscription
 * is gone: PushGoneError, and the caller removes it.
 */
import webpush from "web-push";
import type { AlertWebhookPayload } from "../contract/alerts";
import { guardedFetch } from "../egress/guard";
import { DeliveryError, redactUrls } from "../alerts/deliveryError";
import { SEND_TIMEOUT_MS, statusLine } from "../alerts/senders";
import { pushPayload, urgencyOf } from "./payload";

export interface Vapid {
  subject: string;
  publicKey: string;
  privateKey: string;
}

export interface PushTarget {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

/** The push service says this subscription no longer exists (404 / 410). */
export class PushGoneError extends DeliveryError {}

/** How long a push service keeps a message for a phone that is offline. */
export const PUSH_TTL_SECONDS = 24 * 60 * 60;

export async function sendPush(
  target: PushTarget,
  payload: AlertWebhookPayload,
  vapid: Vapid,
  signal: AbortSignal,
  timeoutMs = SEND_TIMEOUT_MS,
): Promise<void> {
  const body = JSON.stringify(pushPayload(payload));
  let details: ReturnType<typeof webpush.generateRequestDetails>;
  try {
    details = webpush.generateRequestDetails(target, body, {
      vapidDetails: vapid,
      TTL: PUSH_TTL_SECONDS,
      contentEncoding: "aes128gcm",
      urgency: urgencyOf(payload),
    });
  } catch (err) {
    throw new DeliveryError(`cannot prepare the push message: ${redactUrls((err as Error).message)}`);
  }
  let res: Response;
  try {
    res = await guardedFetch(details.endpoint, {
      method: details.method,
      headers: { ...(details.headers as Record<string, string>), "user-agent": "gpudeck-alerts" },
      body: new Uint8Array(details.body as Buffer),
      redirect: "error",
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
    });
  } catch (err) {
    const e = err as Error & { cause?: Error & { code?: string } };
    if (e?.name === "TimeoutError" || e?.name === "AbortError")
      throw new DeliveryError(`the push service did not answer within ${Math.round(timeoutMs / 1000)} s`);
    throw new DeliveryError(redactUrls(e?.cause?.message || e?.cause?.code || e?.message || "request failed"));
  }
  await res.body?.cancel().catch(() => undefined);
  if (res.status === 404 || res.status === 410) throw new PushGoneError(`the push service says the subscription is gone (${statusLine(res)}); it was removed`);
  if (!res.ok) throw new DeliveryError(`the push service answered ${statusLine(res)}`);
}
