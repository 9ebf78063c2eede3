/**
 * What several panel replicas share beyond the first two migrations: the sign-in limiter's
 * counters (rate-limiter-flexible's own table layout, so its SQLite and PostgreSQL stores use it
 * as they are), one-time keys for audit rows every replica would otherwise write (the steps of a
 * GPU-aware restart, seen on each replica's stream), and an index to prune panel events by age.
 */
import type { Kysely, Migration } from "kysely";

/** rate-limiter-flexible's table; ./../../auth/rateLimit.ts names it. */
export const LOGIN_LIMITS_TABLE = "login_limits";

/** (the Dialect of ../database, spelt out: importing it would make a cycle through the migrations index) */
export function replicasSchema(dialect: "sqlite" | "postgres"): Migration {
  const pg = dialect === "postgres";
  const int8 = pg ? "bigint" : "integer";
  return {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a migration runs against whatever schema came before it
    async up(db: Kysely<any>) {
      // column order matters: its PostgreSQL store inserts `VALUES ($1, $2, $3)`
      await db.schema
        .createTable(LOGIN_LIMITS_TABLE)
        .addColumn("key", pg ? "varchar(255)" : "text", (c) => c.primaryKey())
        .addColumn("points", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("expire", int8)
        .execute();
      await db.schema.createIndex("login_limits_by_expire").on(LOGIN_LIMITS_TABLE).column("expire").execute();

      await db.schema
        .createTable("audit_once")
        .addColumn("key", "text", (c) => c.primaryKey())
        .addColumn("at", int8, (c) => c.notNull())
        .execute();
      await db.schema.createIndex("audit_once_by_at").on("audit_once").column("at").execute();

      await db.schema.createIndex("panel_events_by_at").on("panel_events").column("at").execute();
    },
    async down() {
      throw new Error("gpudeck does not downgrade its database; restore a backup instead");
    },
  };
}
