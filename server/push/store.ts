/**
 * The push tables (migration 008_push): the VAPID key pair, made once by whichever replica gets
 * there first (INSERT … ON CONFLICT DO NOTHING on id 1, then everyone reads the row), and each
 * user's subscribed browsers, their keys sealed with the panel's secret key.
 */
import { createHash } from "node:crypto";
import webpush from "web-push";
import type { PushDeviceView, PushSubscriptionJson } from "../contract/push";
import type { Store } from "../store/database";
import { subscriptionKeysContext, vapidPrivateKeyContext } from "../store/migrations/008_push";
import type { PushTarget } from "./send";

type DbStore = Pick<Store, "db" | "secrets" | "nowMs">;

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

/** The panel's VAPID keys: the stored pair, or a new one stored now if there is none (the first writer's pair wins). */
export async function ensureVapidKeys(store: DbStore, make: () => VapidKeys = () => webpush.generateVAPIDKeys()): Promise<VapidKeys> {
  const read = () => store.db.selectFrom("push_vapid").selectAll().where("id", "=", 1).executeTakeFirst();
  let row = await read();
  if (!row) {
    const keys = make();
    await store.db
      .insertInto("push_vapid")
      .values({ id: 1, public_key: keys.publicKey, private_key: store.secrets.seal(keys.privateKey, vapidPrivateKeyContext), created_at: await store.nowMs() })
      .onConflict((oc) => oc.column("id").doNothing())
      .execute();
    row = await read();
    if (!row) throw new Error("the VAPID keys could not be stored");
  }
  return { publicKey: row.public_key, privateKey: store.secrets.open(row.private_key, vapidPrivateKeyContext) };
}

export interface StoredSubscription extends PushTarget {
  id: number;
  userId: number;
}

export class PushLimitError extends Error {}

const serviceOf = (endpoint: string) => {
  try {
    return new URL(endpoint).origin;
  } catch {
    return "?";
  }
};

/** Store a browser's subscription for `userId` (the same endpoint again replaces it, whoever had it). */
export async function saveSubscription(
  store: DbStore & Pick<Store, "write">,
  userId: number,
  sub: PushSubscriptionJson,
  userAgent: string | null,
  maxPerUser: number,
): Promise<{ id: number; replaced: boolean }> {
  const now = await store.nowMs();
  return store.write(async (tx) => {
    const existing = await tx.selectFrom("push_subscriptions").select(["id", "user_id"]).where("endpoint", "=", sub.endpoint).executeTakeFirst();
    if (existing) await tx.deleteFrom("push_subscriptions").where("id", "=", existing.id).execute();
    const count = await tx
      .selectFrom("push_subscriptions")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("user_id", "=", userId)
      .executeTakeFirst();
    if (Number(count?.n ?? 0) >= maxPerUser)
      throw new PushLimitError(
        `You have ${maxPerUser} browsers subscribed already (the most there may be); remove one on the Account page of that browser first.`,
      );
    const { id } = await tx
      .insertInto("push_subscriptions")
      .values({ user_id: userId, endpoint: sub.endpoint, keys: "", user_agent: userAgent?.slice(0, 300) ?? null, created_at: now })
      .returning("id")
      .executeTakeFirstOrThrow();
    const keys = store.secrets.seal(JSON.stringify({ p256dh: sub.keys.p256dh, auth: sub.keys.auth }), subscriptionKeysContext(Number(id)));
    await tx.updateTable("push_subscriptions").set({ keys }).where("id", "=", id).execute();
    return { id: Number(id), replaced: existing !== undefined };
  });
}

/** Remove one of the user's subscriptions by endpoint; whether there was one. */
export async function removeSubscription(store: DbStore, userId: number, endpoint: string): Promise<boolean> {
  const r = await store.db.deleteFrom("push_subscriptions").where("user_id", "=", userId).where("endpoint", "=", endpoint).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function removeSubscriptionById(store: DbStore, id: number): Promise<void> {
  await store.db.deleteFrom("push_subscriptions").where("id", "=", id).execute();
}

function target(store: DbStore, r: { id: number; user_id: number; endpoint: string; keys: string }): StoredSubscription {
  const keys = JSON.parse(store.secrets.open(r.keys, subscriptionKeysContext(Number(r.id)))) as PushTarget["keys"];
  return { id: Number(r.id), userId: Number(r.user_id), endpoint: r.endpoint, keys };
}

export async function subscriptionById(store: DbStore, id: number): Promise<StoredSubscription | null> {
  const r = await store.db.selectFrom("push_subscriptions").select(["id", "user_id", "endpoint", "keys"]).where("id", "=", id).executeTakeFirst();
  return r ? target(store, r) : null;
}

/** Subscription ids of enabled users, with each user's name and rights (for choosing who gets a message). */
export async function subscribedUsers(
  store: DbStore,
): Promise<{ id: number; userId: number; username: string; role: "viewer" | "operator" | "admin"; unitPatterns: string[] }[]> {
  const rows = await store.db
    .selectFrom("push_subscriptions as s")
    .innerJoin("users as u", "u.id", "s.user_id")
    .select(["s.id", "s.user_id", "u.username", "u.role", "u.unit_patterns"])
    .where("u.disabled", "=", 0)
    .orderBy("s.id")
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    userId: Number(r.user_id),
    username: r.username,
    role: r.role,
    unitPatterns: JSON.parse(r.unit_patterns) as string[],
  }));
}

export async function userSubscriptionIds(store: DbStore, userId: number): Promise<number[]> {
  const rows = await store.db.selectFrom("push_subscriptions").select("id").where("user_id", "=", userId).orderBy("id").execute();
  return rows.map((r) => Number(r.id));
}

export async function listDevices(store: DbStore, userId: number): Promise<PushDeviceView[]> {
  const rows = await store.db.selectFrom("push_subscriptions").selectAll().where("user_id", "=", userId).orderBy("id").execute();
  return rows.map((r) => ({
    id: Number(r.id),
    service: serviceOf(r.endpoint),
    userAgent: r.user_agent,
    createdAtMs: Number(r.created_at),
    lastOkAtMs: r.last_ok_at === null ? null : Number(r.last_ok_at),
    lastError: r.last_error,
  }));
}

export async function noteResult(store: DbStore, id: number, error: string | null): Promise<void> {
  const now = await store.nowMs();
  await store.db
    .updateTable("push_subscriptions")
    .set(error === null ? { last_ok_at: now, last_error: null } : { last_error: error })
    .where("id", "=", id)
    .execute();
}

/** A short stable name for an endpoint, for logs (never the endpoint, which is a capability). */
export const endpointTag = (endpoint: string) => `${serviceOf(endpoint)}/…${createHash("sha256").update(endpoint).digest("hex").slice(0, 8)}`;
