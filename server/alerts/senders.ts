/**
 * Sending one message to one channel: the generic webhook (the payload as JSON), a
 * Slack-compatible incoming webhook (`{ text }`, which Mattermost and Rocket.Chat take too),
 * ntfy (JSON publishing to the server root, so titles need no header encoding), and email
 * (./email.ts). Every send has a timeout; a failure throws an error whose message is safe to
 * store and show: it never holds the channel's URL, token or password.
 */
import type { AlertWebhookPayload, ChannelType } from "../contract/alerts";
import { guardedFetch } from "../egress/guard";
import type { Channel } from "./channels";
import { DeliveryError, redactUrls } from "./deliveryError";
import { sendEmail } from "./email";
import { plainText, textLines } from "./message";

export const SEND_TIMEOUT_MS = 10_000;

export type Sender = (channel: Channel, payload: AlertWebhookPayload, signal: AbortSignal) => Promise<void>;

/** "connect ECONNREFUSED 127.0.0.1:4000" from fetch's cause chain, with no URL path or query in it. */
function transportError(err: unknown, timeoutMs: number): DeliveryError {
  const e = err as Error & { cause?: Error & { code?: string } };
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return new DeliveryError(`no answer within ${Math.round(timeoutMs / 1000)} s`);
  const cause = e?.cause;
  const text = cause?.message || cause?.code || e?.message || "request failed";
  return new DeliveryError(redactUrls(text));
}

async function post(url: string, body: string, headers: Record<string, string>, signal: AbortSignal, timeoutMs = SEND_TIMEOUT_MS): Promise<void> {
  let res: Response;
  try {
    // through the egress guard: no link-local or metadata address, after DNS too (GPUDECK_EGRESS_ALLOW)
    res = await guardedFetch(url, {
      method: "POST",
      body,
      headers: { "user-agent": "gpudeck-alerts", ...headers },
      redirect: "error",
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
    });
  } catch (err) {
    throw transportError(err, timeoutMs);
  }
  // the body is never read: it may echo what was sent or hold a secret, and may be any size
  await res.body?.cancel().catch(() => undefined);
  if (!res.ok) throw new DeliveryError(`the receiver answered ${statusLine(res)}`);
}

/** "500 Internal Server Error": the status line only (a reason phrase is cut short and stripped of URLs). */
export function statusLine(res: Pick<Response, "status" | "statusText">): string {
  const reason = redactUrls(res.statusText.replace(/[^\x20-\x7e]+/g, " ").trim()).slice(0, 60);
  return reason ? `${res.status} ${reason}` : String(res.status);
}

const sendWebhook: Sender = (channel, payload, signal) =>
  post(
    channel.url,
    JSON.stringify(payload),
    { "content-type": "application/json", "x-gpudeck-event": payload.kind, "x-gpudeck-message-id": payload.id },
    signal,
  );

/** Slack's mrkdwn: &, < and > are the only characters to escape. */
const slackEscape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export function slackText(p: AlertWebhookPayload): string {
  const icon = p.kind === "test" ? ":wave:" : p.state === "resolved" ? ":white_check_mark:" : p.severity === "critical" ? ":rotating_light:" : ":warning:";
  return [`${icon} *${slackEscape(p.title)}*`, ...textLines(p).map(slackEscape), `<${p.link}|Open in gpudeck>`].join("\n");
}

const sendSlack: Sender = (channel, payload, signal) =>
  post(channel.url, JSON.stringify({ text: slackText(payload) }), { "content-type": "application/json" }, signal);

/** "https://ntfy.sh/gpudeck-alerts" → the server's root and the topic. */
export function ntfyTarget(url: string): { root: string; topic: string } {
  const u = new URL(url);
  const parts = u.pathname.split("/").filter(Boolean);
  const topic = parts.pop();
  if (!topic) throw new DeliveryError("the ntfy URL names no topic (e.g. https://ntfy.sh/my-alerts)");
  return { root: `${u.origin}/${parts.join("/")}`.replace(/\/+$/, "/"), topic };
}

export function ntfyBody(p: AlertWebhookPayload, topic: string) {
  const priority = p.kind === "test" ? 3 : p.state === "resolved" ? 2 : p.severity === "critical" ? 5 : 4;
  const tags = p.kind === "test" ? ["wave"] : p.state === "resolved" ? ["white_check_mark"] : p.severity === "critical" ? ["rotating_light"] : ["warning"];
  return { topic, title: p.title, message: textLines(p).join("\n"), priority, tags, click: p.link };
}

const sendNtfy: Sender = (channel, payload, signal) => {
  const { root, topic } = ntfyTarget(channel.url);
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (channel.token) headers.authorization = `Bearer ${channel.token}`;
  return post(root, JSON.stringify(ntfyBody(payload, topic)), headers, signal);
};

const sendMail: Sender = (channel, payload, signal) => sendEmail(channel, { subject: payload.title, text: plainText(payload) }, signal);

export const SENDERS: Record<ChannelType, Sender> = { webhook: sendWebhook, slack: sendSlack, ntfy: sendNtfy, email: sendMail };

/** Push channels are sent by the push service (server/push/), which AlertsService puts in front of this. */
export function sendTo(channel: Channel, payload: AlertWebhookPayload, signal: AbortSignal): Promise<void> {
  if (channel.type === "push") return Promise.reject(new DeliveryError("push is not set up on this panel"));
  return SENDERS[channel.type](channel, payload, signal);
}
