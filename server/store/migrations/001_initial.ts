/** Users, sessions, setup tokens, the audit log, hosts added on the Hosts page, panel events and the action guard. */
import { sql, type CreateTableBuilder, type Kysely, type Migration } from "kysely";
import type { Dialect } from "../dialect";

export function initialSchema(dialect: Dialect): Migration {
  const pg = dialect === "postgres";
  // 64-bit integers (ms timestamps): SQLite's INTEGER is 64-bit already
  const int8 = pg ? "bigint" : "integer";
  const id = <T extends string>(t: CreateTableBuilder<T, never>) =>
    pg
      ? t.addColumn("id", "bigint", (c) => c.primaryKey().generatedByDefaultAsIdentity())
      : t.addColumn("id", "integer", (c) => c.primaryKey().autoIncrement());
  return {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a migration runs against whatever schema came before it
    async up(db: Kysely<any>) {
      await id(db.schema.createTable("users").ifNotExists())
        .addColumn("username", "text", (c) => c.notNull())
        .addColumn("password_hash", "text")
        .addColumn("role", "text", (c) => c.notNull().check(sql`role in ('viewer', 'operator', 'admin')`))
        .addColumn("unit_patterns", "text", (c) => c.notNull().defaultTo("[]"))
        .addColumn("disabled", "integer", (c) =>
          c
            .notNull()
            .defaultTo(0)
            .check(sql`disabled in (0, 1)`),
        )
        .addColumn("created_at", int8, (c) => c.notNull())
        .addColumn("password_changed_at", int8)
        .execute();
      // case-insensitive names on both databases (SQLite files of the older migrator also have COLLATE NOCASE)
      await db.schema
        .createIndex("users_by_lower_name")
        .ifNotExists()
        .unique()
        .on("users")
        .expression(sql`lower(username)`)
        .execute();

      await db.schema
        .createTable("sessions")
        .ifNotExists()
        .addColumn("id_hash", "text", (c) => c.primaryKey())
        .addColumn("user_id", int8, (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("created_at", int8, (c) => c.notNull())
        .addColumn("last_seen_at", int8, (c) => c.notNull())
        .addColumn("source_addr", "text")
        .addColumn("user_agent", "text")
        .execute();
      await db.schema.createIndex("sessions_by_user").ifNotExists().on("sessions").column("user_id").execute();

      await db.schema
        .createTable("setup_tokens")
        .ifNotExists()
        .addColumn("token_hash", "text", (c) => c.primaryKey())
        .addColumn("created_at", int8, (c) => c.notNull())
        .addColumn("expires_at", int8, (c) => c.notNull())
        .execute();

      await id(db.schema.createTable("audit_log").ifNotExists())
        .addColumn("at", int8, (c) => c.notNull())
        .addColumn("user", "text")
        .addColumn("role", "text")
        .addColumn("source_addr", "text")
        .addColumn("host", "text")
        .addColumn("unit", "text")
        .addColumn("action", "text", (c) => c.notNull())
        .addColumn("reason", "text")
        .addColumn("outcome", "text", (c) => c.notNull())
        .addColumn("job_id", int8)
        .addColumn("detail", "text")
        .execute();
      await db.schema.createIndex("audit_by_at").ifNotExists().on("audit_log").column("at").execute();
      await db.schema
        .createIndex("audit_by_lower_user")
        .ifNotExists()
        .on("audit_log")
        .expression(sql`lower("user"), id`)
        .execute();
      await db.schema.createIndex("audit_by_unit").ifNotExists().on("audit_log").columns(["unit", "id"]).execute();
      await db.schema.createIndex("audit_by_action").ifNotExists().on("audit_log").columns(["action", "id"]).execute();
      await db.schema.createIndex("audit_by_job").ifNotExists().on("audit_log").columns(["host", "job_id"]).execute();

      await db.schema
        .createTable("hosts")
        .ifNotExists()
        .addColumn("name", "text", (c) => c.primaryKey())
        .addColumn("url", "text", (c) => c.notNull())
        .addColumn("token", "text", (c) => c.notNull())
        .addColumn("created_at", int8, (c) => c.notNull())
        .addColumn("created_by", "text")
        .addColumn("updated_at", int8, (c) => c.notNull())
        .execute();

      await id(db.schema.createTable("panel_events").ifNotExists())
        .addColumn("at", int8, (c) => c.notNull())
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("body", "text", (c) => c.notNull())
        .execute();

      await db.schema
        .createTable("action_guard")
        .ifNotExists()
        .addColumn("host", "text", (c) => c.notNull())
        .addColumn("unit", "text", (c) => c.notNull())
        .addColumn("action", "text", (c) => c.notNull())
        .addColumn("user", "text", (c) => c.notNull())
        .addColumn("last_at", int8, (c) => c.notNull())
        .addPrimaryKeyConstraint("action_guard_pk", ["host", "unit"])
        .execute();
    },
    async down() {
      throw new Error("gpudeck does not downgrade its database; restore a backup instead");
    },
  };
}
