/**
 * Two-factor sign-in for local accounts (TOTP, ../../auth/totp.ts):
 * - `user_totp`: one row per user who started or finished enrolment. `secret` sealed with the
 *   panel's key (../secretBox.ts, context `user_totp.secret/<user id>`); `enabled_at` null until
 *   the first code confirmed it; `last_step` the newest time step a code was accepted for (a code
 *   is refused for that step or any earlier one: no replay); `recovery_codes` JSON list of the
 *   SHA-256 of the unused recovery codes.
 * - `totp_challenges`: a sign-in whose password was right and whose code is still to come, keyed
 *   by the hash of the id given to that browser, short-lived, with its wrong codes counted (any
 *   replica answers the second step).
 * - `sessions.oidc_id_token`: the provider's ID token of a single sign-on session, sealed
 *   (context `sessions.oidc_id_token/<id hash>`), for the `id_token_hint` at sign-out
 *   (../../auth/oidc/idTokens.ts); never sent to the browser.
 */
import type { Kysely, Migration } from "kysely";

/** (the Dialect of ../database, spelt out: importing it would make a cycle through the migrations index) */
export function totpSchema(dialect: "sqlite" | "postgres"): Migration {
  const int8 = dialect === "postgres" ? "bigint" : "integer";
  return {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a migration runs against whatever schema came before it
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("user_totp")
        .addColumn("user_id", int8, (c) => c.primaryKey().references("users.id").onDelete("cascade"))
        .addColumn("secret", "text", (c) => c.notNull())
        .addColumn("created_at", int8, (c) => c.notNull())
        .addColumn("enabled_at", int8)
        .addColumn("last_step", int8)
        .addColumn("recovery_codes", "text", (c) => c.notNull().defaultTo("[]"))
        .execute();
      await db.schema
        .createTable("totp_challenges")
        .addColumn("id_hash", "text", (c) => c.primaryKey())
        .addColumn("user_id", int8, (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("created_at", int8, (c) => c.notNull())
        .addColumn("expires_at", int8, (c) => c.notNull())
        .addColumn("failures", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex("totp_challenges_by_expiry").on("totp_challenges").column("expires_at").execute();
      await db.schema.alterTable("sessions").addColumn("oidc_id_token", "text").execute();
    },
    async down() {
      throw new Error("gpudeck does not downgrade its database; restore a backup instead");
    },
  };
}
