/**
 * The on-call loop (issue 23): an alert can be acknowledged (who, when, a note), escalated once
 * (when, so only one replica sends it), and opened during planned maintenance (recorded, not
 * sent); maintenance windows themselves: one-off (starts_at/ends_at) or recurring (cron,
 * duration_minutes, time_zone), for a list of host:unit patterns.
 */
import { sql, type Kysely, type Migration } from "kysely";

/** (the Dialect of ../database, spelt out: importing it would make a cycle through the migrations index) */
export function alertLifecycleSchema(dialect: "sqlite" | "postgres"): Migration {
  const pg = dialect === "postgres";
  const int8 = pg ? "bigint" : "integer";
  return {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a migration runs against whatever schema came before it
    async up(db: Kysely<any>) {
      await db.schema.alterTable("alerts").addColumn("acknowledged_by", "text").execute();
      await db.schema.alterTable("alerts").addColumn("acknowledged_at", int8).execute();
      await db.schema.alterTable("alerts").addColumn("ack_note", "text").execute();
      await db.schema.alterTable("alerts").addColumn("escalated_at", int8).execute();
      await db.schema
        .alterTable("alerts")
        .addColumn("in_maintenance", "integer", (c) =>
          c
            .notNull()
            .defaultTo(0)
            .check(sql`in_maintenance in (0, 1)`),
        )
        .execute();

      let t = db.schema.createTable("maintenance_windows");
      t = pg
        ? t.addColumn("id", "bigint", (c) => c.primaryKey().generatedByDefaultAsIdentity())
        : t.addColumn("id", "integer", (c) => c.primaryKey().autoIncrement());
      await t
        .addColumn("name", "text", (c) => c.notNull())
        // JSON list of host:unit patterns
        .addColumn("units", "text", (c) => c.notNull())
        .addColumn("starts_at", int8)
        .addColumn("ends_at", int8)
        .addColumn("cron", "text")
        .addColumn("duration_minutes", "integer")
        .addColumn("time_zone", "text")
        .addColumn("exclude_uptime", "integer", (c) =>
          c
            .notNull()
            .defaultTo(1)
            .check(sql`exclude_uptime in (0, 1)`),
        )
        .addColumn("created_by", "text", (c) => c.notNull())
        .addColumn("created_at", int8, (c) => c.notNull())
        .addColumn("ended_at", int8)
        .addColumn("ended_by", "text")
        .addCheckConstraint(
          "maintenance_one_kind",
          sql`(cron is null and starts_at is not null and ends_at is not null) or (cron is not null and duration_minutes is not null)`,
        )
        .execute();
      await db.schema.createIndex("maintenance_by_ended").on("maintenance_windows").columns(["ended_at", "id"]).execute();
    },
    async down() {
      throw new Error("gpudeck does not downgrade its database; restore a backup instead");
    },
  };
}
