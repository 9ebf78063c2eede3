/**
 * The push tables on SQLite and PostgreSQL: one VAPID pair for every replica (the first writer's),
 * its private key sealed; subscriptions capped per user, keys sealed, the same endpoint again
 * replacing the old row; a fan-out that runs twice (two replicas, or a retry) queues each device once.
 */
import webpush from "web-push";
import { describe, expect, it } from "vitest";
import { enqueueMessage } from "../alerts/outbox";
import { testPayload } from "../alerts/message";
import type { Store } from "../store/database";
import type { LazyStore } from "../store/lazyStore";
import { testDatabasesForFile } from "../store/testing/databases";
import { loadPushConfig } from "./config";
import { PushService } from "./service";
import { ensureVapidKeys, PushLimitError, saveSubscription, subscriptionById } from "./store";

const dbs = testDatabasesForFile("the push tables");

const sub = (n: number) => ({ endpoint: `https://push.example/s/${n}`, keys: { p256dh: `p256dh${n}`, auth: `auth${n}` } });

async function user(store: Store, username: string): Promise<number> {
  const { id } = await store.db
    .insertInto("users")
    .values({ username, password_hash: null, role: "operator", unit_patterns: "[]", created_at: 1, password_changed_at: null })
    .returning("id")
    .executeTakeFirstOrThrow();
  return Number(id);
}

describe.each(dbs.dialects)("%s", (dialect) => {
  it("two replicas starting at once end up with one VAPID key pair, the private key sealed", async () => {
    const db = await dbs.fresh(dialect);
    const [a, b] = [await db.open(), await db.open()];
    const pairs = [webpush.generateVAPIDKeys(), webpush.generateVAPIDKeys()];
    const [ka, kb] = await Promise.all([ensureVapidKeys(a, () => pairs[0]!), ensureVapidKeys(b, () => pairs[1]!)]);
    expect(ka).toEqual(kb);
    expect(pairs.map((p) => p.publicKey)).toContain(ka.publicKey);
    const row = await a.db.selectFrom("push_vapid").selectAll().executeTakeFirstOrThrow();
    expect(row.private_key.startsWith("gdsec1.")).toBe(true);
    expect(row.private_key).not.toContain(ka.privateKey);
    // and later starts read it
    expect(await ensureVapidKeys(await db.open(), () => webpush.generateVAPIDKeys())).toEqual(ka);
  });

  it("subscriptions: keys sealed, capped per user, the same endpoint again replaces the old row", async () => {
    const store = await (await dbs.fresh(dialect)).open();
    const alice = await user(store, "alice");
    const bob = await user(store, "bob");
    const first = await saveSubscription(store, alice, sub(1), "Firefox", 3);
    expect(first.replaced).toBe(false);
    expect(await subscriptionById(store, first.id)).toMatchObject({ userId: alice, endpoint: sub(1).endpoint, keys: sub(1).keys });
    const raw = await store.db.selectFrom("push_subscriptions").select("keys").where("id", "=", first.id).executeTakeFirstOrThrow();
    expect(raw.keys).not.toContain("auth1");
    await saveSubscription(store, alice, sub(2), null, 3);
    await saveSubscription(store, alice, sub(3), null, 3);
    await expect(saveSubscription(store, alice, sub(4), null, 3)).rejects.toThrow(PushLimitError);
    // the browser's endpoint again (here: now signed in as bob) moves it
    const again = await saveSubscription(store, bob, sub(1), null, 3);
    expect(again.replaced).toBe(true);
    expect(await subscriptionById(store, first.id)).toBeNull();
    expect((await subscriptionById(store, again.id))?.userId).toBe(bob);
  });

  it("a fan-out run twice queues each device once", async () => {
    const db = await dbs.fresh(dialect);
    const [a, b] = [await db.open(), await db.open()];
    const alice = await user(a, "alice");
    const bob = await user(a, "bob");
    const s1 = await saveSubscription(a, alice, sub(1), null, 5);
    const s2 = await saveSubscription(a, bob, sub(2), null, 5);
    const service = (s: Store) =>
      new PushService({
        store: { get: async () => s } as unknown as LazyStore,
        config: loadPushConfig({ GPUDECK_PUSH_GROUPS: '{"oncall":["bob"]}' }),
        panelUrl: "https://x",
        log: () => {},
      });
    const now = await a.nowMs();
    const messageId = await a.db
      .transaction()
      .execute((trx) =>
        enqueueMessage(trx, { kind: "test", host: null, rule: null, state: "firing", payload: (id) => testPayload(id, "push", "https://x", now) }, [], now),
      );
    const payload = testPayload(messageId, "push", "https://x", now);
    const [push, oncall] = service(a).channels();
    expect([push!.name, oncall!.name]).toEqual(["push", "push:oncall"]);
    const signal = new AbortController().signal;
    await Promise.all([service(a).send(push!, payload, signal), service(b).send(push!, payload, signal), service(b).send(oncall!, payload, signal)]);
    const rows = await a.db.selectFrom("alert_outbox").select("channel_id").where("message_id", "=", messageId).orderBy("channel_id").execute();
    expect(rows.map((r) => r.channel_id)).toEqual([`psub-${s1.id}`, `psub-${s2.id}`]);
    expect(await service(a).resolve(`psub-${s1.id}`)).toMatchObject({ type: "push", url: sub(1).endpoint });
    expect(await service(a).resolve("psub-999")).toBeNull();
  });
});
