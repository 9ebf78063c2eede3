/**
 * API tokens for scripts and CI (`Authorization: Bearer gdk_…` on /api/trpc): one row per token,
 * only the SHA-256 of the secret stored. `kind` personal (acts as its owner, never beyond the
 * owner's rights now) or service (made by an admin, for a machine). `units`: JSON list of unit
 * patterns for an operator token. Revoked rows stay (the audit log names them), `revoked_at` set.
 */
import { sql, type Kysely, type Migration } from "kysely";

/** (the Dialect of ../database, spelt out: importing it would make a cycle through the migrations index) */
export function apiTokensSchema(dialect: "sqlite" | "postgres"): Migration {
  const pg = dialect === "postgres";
  const int8 = pg ? "bigint" : "integer";
  return {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a migration runs against whatever schema came before it
    async up(db: Kysely<any>) {
      const table = db.schema.createTable("api_tokens");
      await (
        pg
          ? table.addColumn("id", "bigint", (c) => c.primaryKey().generatedByDefaultAsIdentity())
          : table.addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      )
        .addColumn("owner_id", int8, (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('personal', 'service')`))
        .addColumn("role", "text", (c) => c.notNull().check(sql`role in ('viewer', 'operator', 'admin')`))
        .addColumn("units", "text", (c) => c.notNull().defaultTo("[]"))
        .addColumn("token_hash", "text", (c) => c.notNull().unique())
        .addColumn("created_at", int8, (c) => c.notNull())
        .addColumn("expires_at", int8, (c) => c.notNull())
        .addColumn("last_used_at", int8)
        .addColumn("revoked_at", int8)
        .execute();
      await db.schema.createIndex("api_tokens_by_owner").on("api_tokens").column("owner_id").execute();
    },
    async down() {
      throw new Error("gpudeck does not downgrade its database; restore a backup instead");
    },
  };
}
