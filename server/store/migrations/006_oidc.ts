/**
 * Single sign-on (OIDC): where each user comes from (`source`: local, or the identity provider with
 * its subject), and the sign-ins in progress (`oidc_flows`: state, nonce and PKCE verifier of a
 * browser that went to the provider, keyed by the hash of the id in its short-lived cookie, used
 * once, so any replica answers the callback).
 */
import { sql, type Kysely, type Migration } from "kysely";

/** (the Dialect of ../database, spelt out: importing it would make a cycle through the migrations index) */
export function oidcSchema(dialect: "sqlite" | "postgres"): Migration {
  const int8 = dialect === "postgres" ? "bigint" : "integer";
  return {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a migration runs against whatever schema came before it
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable("users")
        .addColumn("source", "text", (c) =>
          c
            .notNull()
            .defaultTo("local")
            .check(sql`source in ('local', 'oidc')`),
        )
        .execute();
      await db.schema.alterTable("users").addColumn("oidc_subject", "text").execute();
      await db.schema.createIndex("users_by_oidc_subject").unique().on("users").column("oidc_subject").execute();

      await db.schema
        .createTable("oidc_flows")
        .addColumn("id_hash", "text", (c) => c.primaryKey())
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("nonce", "text", (c) => c.notNull())
        .addColumn("code_verifier", "text", (c) => c.notNull())
        .addColumn("next", "text", (c) => c.notNull())
        .addColumn("created_at", int8, (c) => c.notNull())
        .addColumn("expires_at", int8, (c) => c.notNull())
        .addColumn("used_at", int8)
        .execute();
      await db.schema.createIndex("oidc_flows_by_expiry").on("oidc_flows").column("expires_at").execute();
    },
    async down() {
      throw new Error("gpudeck does not downgrade its database; restore a backup instead");
    },
  };
}
