/**
 * Alerts and the status page: open and past alerts (at most one open per rule, host and unit,
 * for every replica together), the notifications waiting to be grouped, the messages and their
 * per-channel outbox, channels, silences, and the status page's settings.
 */
import { sql, type CreateTableBuilder, type Kysely, type Migration } from "kysely";

/** (the Dialect of ../database, spelt out: importing it would make a cycle through the migrations index) */
export function alertsSchema(dialect: "sqlite" | "postgres"): Migration {
  const pg = dialect === "postgres";
  const int8 = pg ? "bigint" : "integer";
  const id = <T extends string>(t: CreateTableBuilder<T, never>) =>
    pg
      ? t.addColumn("id", "bigint", (c) => c.primaryKey().generatedByDefaultAsIdentity())
      : t.addColumn("id", "integer", (c) => c.primaryKey().autoIncrement());
  const flag = (name: string) => (t: CreateTableBuilder<string, never>) =>
    t.addColumn(name, "integer", (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`${sql.ref(name)} in (0, 1)`),
    );
  return {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a migration runs against whatever schema came before it
    async up(db: Kysely<any>) {
      await id(db.schema.createTable("alerts"))
        .addColumn("rule", "text", (c) => c.notNull())
        .addColumn("host", "text", (c) => c.notNull())
        // '' for host rules: a unique index treats NULLs as distinct, '' is one value
        .addColumn("unit", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("severity", "text", (c) => c.notNull())
        .addColumn("summary", "text", (c) => c.notNull())
        .addColumn("since_at", int8, (c) => c.notNull())
        .addColumn("opened_at", int8, (c) => c.notNull())
        .addColumn("resolved_at", int8)
        .addColumn("diagnosis", "text")
        .addColumn("diagnosis_state", "text", (c) => c.notNull().check(sql`diagnosis_state in ('pending', 'done', 'unavailable', 'none')`))
        .addColumn("diagnosis_error", "text")
        .$call(flag("silenced"))
        .$call(flag("fire_queued"))
        .execute();
      // two replicas that both see a unit fail open one alert: INSERT … ON CONFLICT DO NOTHING
      await db.schema
        .createIndex("alerts_one_open")
        .unique()
        .on("alerts")
        .columns(["rule", "host", "unit"])
        .where(sql.ref("resolved_at"), "is", null)
        .execute();
      await db.schema.createIndex("alerts_by_host_unit").on("alerts").columns(["host", "unit", "id"]).execute();
      await db.schema.createIndex("alerts_by_resolved").on("alerts").columns(["resolved_at"]).execute();

      await id(db.schema.createTable("alert_notifications"))
        .addColumn("alert_id", int8, (c) => c.notNull().references("alerts.id").onDelete("cascade"))
        .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('firing', 'resolved')`))
        .addColumn("created_at", int8, (c) => c.notNull())
        .addColumn("message_id", int8)
        .execute();
      await db.schema.createIndex("alert_notifications_pending").on("alert_notifications").columns(["message_id", "created_at"]).execute();

      await id(db.schema.createTable("alert_messages"))
        .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('alert', 'test')`))
        .addColumn("host", "text")
        .addColumn("rule", "text")
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("title", "text", (c) => c.notNull())
        .addColumn("payload", "text", (c) => c.notNull())
        .addColumn("created_at", int8, (c) => c.notNull())
        .execute();

      await id(db.schema.createTable("alert_outbox"))
        .addColumn("message_id", int8, (c) => c.notNull().references("alert_messages.id").onDelete("cascade"))
        .addColumn("channel_id", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('pending', 'sent', 'failed')`))
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("created_at", int8, (c) => c.notNull())
        .addColumn("next_attempt_at", int8, (c) => c.notNull())
        .addColumn("lease_until", int8)
        .addColumn("last_attempt_at", int8)
        .addColumn("sent_at", int8)
        .addColumn("last_error", "text")
        .execute();
      await db.schema.createIndex("alert_outbox_by_channel").on("alert_outbox").columns(["channel_id", "status", "id"]).execute();
      await db.schema.createIndex("alert_outbox_by_status").on("alert_outbox").columns(["status", "next_attempt_at"]).execute();

      await db.schema
        .createTable("alert_channels")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("type", "text", (c) => c.notNull().check(sql`type in ('webhook', 'slack', 'ntfy', 'email')`))
        .addColumn("name", "text", (c) => c.notNull().unique())
        // JSON: what may be shown (email from/to/username)
        .addColumn("config", "text", (c) => c.notNull())
        // JSON: what is never shown back (webhook URL, ntfy URL and token, SMTP password)
        .addColumn("secret", "text", (c) => c.notNull())
        .$call(flag("enabled"))
        .addColumn("created_at", int8, (c) => c.notNull())
        .addColumn("created_by", "text")
        .addColumn("updated_at", int8, (c) => c.notNull())
        .execute();

      await id(db.schema.createTable("alert_silences"))
        .addColumn("host_pattern", "text", (c) => c.notNull())
        .addColumn("unit_pattern", "text")
        .addColumn("rule", "text")
        .addColumn("reason", "text", (c) => c.notNull())
        .addColumn("created_by", "text", (c) => c.notNull())
        .addColumn("created_at", int8, (c) => c.notNull())
        .addColumn("ends_at", int8, (c) => c.notNull())
        .addColumn("ended_at", int8)
        .addColumn("ended_by", "text")
        .execute();

      await db.schema
        .createTable("status_page")
        .addColumn("id", "integer", (c) => c.primaryKey().check(sql`id = 1`))
        .$call(flag("enabled"))
        .$call(flag("public"))
        .$call(flag("show_hosts"))
        .addColumn("token_hash", "text")
        .addColumn("token_hint", "text")
        .addColumn("groups", "text", (c) => c.notNull().defaultTo("[]"))
        .addColumn("updated_at", int8)
        .addColumn("updated_by", "text")
        .execute();
    },
    async down() {
      throw new Error("gpudeck does not downgrade its database; restore a backup instead");
    },
  };
}
