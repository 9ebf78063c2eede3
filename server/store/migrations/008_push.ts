/**
 * Web Push (server/push/): the panel's VAPID key pair, made at first start by whichever replica
 * gets there first (one row, id 1; the others read it), its private key sealed with the panel's
 * secret key (../secretBox.ts, context `push_vapid.private_key/1`); and the browsers subscribed
 * by each user (`push_subscriptions`: the push service's endpoint, unique, and the subscription's
 * keys sealed, context `push_subscriptions.keys/<id>`). A unique index on the outbox's
 * (message, channel) lets a push fan-out queue each device once per message, however often it runs.
 */
import type { Kysely, Migration } from "kysely";

export const vapidPrivateKeyContext = "push_vapid.private_key/1";
export const subscriptionKeysContext = (id: number) => `push_subscriptions.keys/${id}`;

/** (the Dialect of ../database, spelt out: importing it would make a cycle through the migrations index) */
export function pushSchema(dialect: "sqlite" | "postgres"): Migration {
  const pg = dialect === "postgres";
  const int8 = pg ? "bigint" : "integer";
  return {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a migration runs against whatever schema came before it
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("push_vapid")
        .addColumn("id", "integer", (c) => c.primaryKey())
        .addColumn("public_key", "text", (c) => c.notNull())
        .addColumn("private_key", "text", (c) => c.notNull())
        .addColumn("created_at", int8, (c) => c.notNull())
        .execute();
      const subs = db.schema.createTable("push_subscriptions");
      await (
        pg
          ? subs.addColumn("id", "bigint", (c) => c.primaryKey().generatedByDefaultAsIdentity())
          : subs.addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      )
        .addColumn("user_id", int8, (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("endpoint", "text", (c) => c.notNull().unique())
        .addColumn("keys", "text", (c) => c.notNull())
        .addColumn("user_agent", "text")
        .addColumn("created_at", int8, (c) => c.notNull())
        .addColumn("last_ok_at", int8)
        .addColumn("last_error", "text")
        .execute();
      await db.schema.createIndex("push_subscriptions_by_user").on("push_subscriptions").column("user_id").execute();
      await db.schema.createIndex("alert_outbox_message_channel").unique().on("alert_outbox").columns(["message_id", "channel_id"]).execute();
    },
    async down() {
      throw new Error("gpudeck does not downgrade its database; restore a backup instead");
    },
  };
}
