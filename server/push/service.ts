/**
 * Web Push as a kind of alert channel. Two kinds of channel:
 *   - fan-out channels, listed with the channels from the config: `push` (every subscribed
 *     browser of every user who may see the alert's units) and `push:<group>` for each group of
 *     [panel.push.groups] (its members' browsers: usernames, or role:<role>). Sending a message
 *     to one queues the message again in the outbox for each device it reaches, once per device
 *     and message (a unique index: replicas and retries cannot queue it twice);
 *   - one channel per subscribed browser, `psub-<id>`, found by id only (never listed, never
 *     given everything): each has its own retries, backoff and rate, like any channel. A push
 *     service's 404/410 removes the subscription.
 */
import { can } from "../auth/authorize";
import type { Channel } from "../alerts/channels";
import { DeliveryError } from "../alerts/deliveryError";
import { testPayload } from "../alerts/message";
import { enqueueMessage } from "../alerts/outbox";
import type { AlertWebhookPayload } from "../contract/alerts";
import type { PushDeviceView, PushSubscriptionJson } from "../contract/push";
import type { LazyStore } from "../store/lazyStore";
import { endpointProblem, type PushConfig } from "./config";
import { PushGoneError, sendPush, type Vapid } from "./send";
import {
  endpointTag,
  ensureVapidKeys,
  listDevices,
  noteResult,
  removeSubscription,
  removeSubscriptionById,
  saveSubscription,
  subscribedUsers,
  subscriptionById,
  userSubscriptionIds,
} from "./store";

export const PUSH_CHANNEL = "push";
const DEVICE_PREFIX = "psub-";
export const deviceChannelId = (subscriptionId: number) => `${DEVICE_PREFIX}${subscriptionId}`;

export class PushInputError extends Error {}

function virtualChannel(id: string, name: string): Channel {
  return {
    id,
    type: "push",
    name,
    enabled: true,
    source: "env",
    url: "",
    token: null,
    from: null,
    to: [],
    username: null,
    password: null,
    createdAtMs: 0,
    createdBy: null,
  };
}

/** "gpudeck-42" → 42 */
function messageIdOf(payload: AlertWebhookPayload): number {
  const m = /^gpudeck-(\d+)$/.exec(payload.id);
  if (!m) throw new DeliveryError(`a message without a panel id (${payload.id}) cannot be fanned out`);
  return Number(m[1]);
}

export interface PushServiceOptions {
  store: LazyStore;
  config: PushConfig;
  panelUrl: string;
  log: (msg: string) => void;
}

export class PushService {
  private vapid: Promise<Vapid> | null = null;

  constructor(private readonly o: PushServiceOptions) {}

  get enabled(): boolean {
    return this.o.config.enabled;
  }

  /** The panel's VAPID keys (made at first start by the first replica, read by the others). */
  keys(): Promise<Vapid> {
    this.vapid ??= (async () => ({ subject: this.o.config.subject, ...(await ensureVapidKeys(await this.o.store.get())) }))().catch((err: unknown) => {
      this.vapid = null;
      throw err;
    });
    return this.vapid;
  }

  async publicKey(): Promise<string> {
    return (await this.keys()).publicKey;
  }

  // --- channels, for the alert delivery (../alerts/service.ts PushChannels) --------------------

  channels(): Channel[] {
    if (!this.enabled) return [];
    return [virtualChannel(PUSH_CHANNEL, PUSH_CHANNEL), ...Object.keys(this.o.config.groups).map((g) => virtualChannel(`push:${g}`, `push:${g}`))];
  }

  async resolve(id: string): Promise<Channel | null> {
    if (!this.enabled || !id.startsWith(DEVICE_PREFIX)) return null;
    const n = Number(id.slice(DEVICE_PREFIX.length));
    if (!Number.isSafeInteger(n) || n <= 0) return null;
    const sub = await subscriptionById(await this.o.store.get(), n);
    return sub ? { ...virtualChannel(id, `push device ${n}`), url: sub.endpoint } : null;
  }

  send = async (channel: Channel, payload: AlertWebhookPayload, signal: AbortSignal): Promise<void> => {
    if (channel.id.startsWith(DEVICE_PREFIX)) return this.sendToDevice(Number(channel.id.slice(DEVICE_PREFIX.length)), payload, signal);
    await this.fanOut(channel.name, payload);
  };

  /** The subscription ids a fan-out channel reaches for this message. */
  async recipients(channelName: string, _payload: AlertWebhookPayload): Promise<number[]> {
    const users = await subscribedUsers(await this.o.store.get());
    if (channelName === PUSH_CHANNEL) {
      // everyone who may see the units the message is about (today every signed-in role may view every unit)
      return users.filter((u) => can({ role: u.role, unitPatterns: u.unitPatterns }, "view").allowed).map((u) => u.id);
    }
    const group = channelName.startsWith("push:") ? this.o.config.groups[channelName.slice(5)] : undefined;
    if (!group) throw new DeliveryError(`there is no push group named ${channelName.slice(5)} in [panel.push.groups]`);
    return users.filter((u) => group.includes(u.username) || group.includes(`role:${u.role}`)).map((u) => u.id);
  }

  private async fanOut(channelName: string, payload: AlertWebhookPayload): Promise<void> {
    const messageId = messageIdOf(payload);
    const ids = await this.recipients(channelName, payload);
    if (ids.length === 0) return;
    const store = await this.o.store.get();
    const now = await store.nowMs();
    await store.db
      .insertInto("alert_outbox")
      .values(
        ids.map((id) => ({
          message_id: messageId,
          channel_id: deviceChannelId(id),
          status: "pending" as const,
          attempts: 0,
          created_at: now,
          next_attempt_at: now,
        })),
      )
      .onConflict((oc) => oc.columns(["message_id", "channel_id"]).doNothing())
      .execute();
  }

  private async sendToDevice(id: number, payload: AlertWebhookPayload, signal: AbortSignal): Promise<void> {
    const store = await this.o.store.get();
    const sub = await subscriptionById(store, id);
    if (!sub) throw new DeliveryError("the browser's subscription was removed");
    try {
      await sendPush(sub, payload, await this.keys(), signal);
    } catch (err) {
      if (err instanceof PushGoneError) {
        await removeSubscriptionById(store, id);
        this.o.log(`push: removed subscription ${id} (${endpointTag(sub.endpoint)}) of user ${sub.userId}: ${err.message}`);
      } else if (err instanceof DeliveryError) {
        await noteResult(store, id, err.message).catch(() => undefined);
      }
      throw err;
    }
    await noteResult(store, id, null);
  }

  // --- the caller's own browsers (push.* procedures) -----------------------------------------

  async subscribe(userId: number, sub: PushSubscriptionJson, userAgent: string | null): Promise<{ id: number; replaced: boolean }> {
    if (!this.enabled) throw new PushInputError("Push notifications are turned off on this panel (GPUDECK_PUSH=0).");
    const problem = endpointProblem(sub.endpoint, this.o.config.allowHttpLoopback);
    if (problem) throw new PushInputError(`This subscription cannot be used: ${problem}.`);
    return saveSubscription(await this.o.store.get(), userId, sub, userAgent, this.o.config.maxPerUser);
  }

  async unsubscribe(userId: number, endpoint: string): Promise<boolean> {
    return removeSubscription(await this.o.store.get(), userId, endpoint);
  }

  async devices(userId: number): Promise<PushDeviceView[]> {
    return listDevices(await this.o.store.get(), userId);
  }

  /** A test notification to the user's own browsers; how many it was queued for (the caller kicks the deliverer). */
  async test(userId: number, username: string): Promise<{ messageId: number | null; devices: number }> {
    if (!this.enabled) throw new PushInputError("Push notifications are turned off on this panel (GPUDECK_PUSH=0).");
    const store = await this.o.store.get();
    const ids = await userSubscriptionIds(store, userId);
    if (ids.length === 0) return { messageId: null, devices: 0 };
    const now = await store.nowMs();
    const messageId = await store.db
      .transaction()
      .execute((trx) =>
        enqueueMessage(
          trx,
          { kind: "test", host: null, rule: null, state: "firing", payload: (mid) => testPayload(mid, `push to ${username}'s devices`, this.o.panelUrl, now) },
          ids.map(deviceChannelId),
          now,
        ),
      );
    return { messageId, devices: ids.length };
  }
}
