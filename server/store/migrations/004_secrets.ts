/**
 * Secrets encrypted at rest (../secretBox.ts): the agent tokens of hosts added on the Hosts page
 * and alert channels' secret JSON (webhook URL, ntfy token, SMTP password) stored until now in
 * plain text are sealed with the panel's key. Hosts added on the Hosts page also get what the
 * agents file could say already: a CA (PEM) or a pinned fingerprint, and `insecure_http` for a
 * plain-HTTP agent that is not on loopback.
 */
import type { Kysely, Migration } from "kysely";
import type { SecretBox } from "../secretBox";

/** Where each sealed value lives (the AAD): a value cannot be moved to another row. */
export const hostTokenContext = (name: string) => `hosts.token/${name}`;
export const channelSecretContext = (id: string) => `alert_channels.secret/${id}`;

/** (the Dialect of ../database, spelt out: importing it would make a cycle through the migrations index) */
export function secretsSchema(_dialect: "sqlite" | "postgres", secrets?: SecretBox): Migration {
  return {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a migration runs against whatever schema came before it
    async up(db: Kysely<any>) {
      if (!secrets) throw new Error("migration 004_secrets needs the panel's secret key (GPUDECK_SECRET_KEY or <data dir>/secret-key)");
      await db.schema.alterTable("hosts").addColumn("ca_pem", "text").execute();
      await db.schema.alterTable("hosts").addColumn("fingerprint", "text").execute();
      await db.schema
        .alterTable("hosts")
        .addColumn("insecure_http", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      for (const row of (await db.selectFrom("hosts").select(["name", "token"]).execute()) as { name: string; token: string }[]) {
        if (secrets.isSealed(row.token)) continue;
        await db
          .updateTable("hosts")
          .set({ token: secrets.seal(row.token, hostTokenContext(row.name)) })
          .where("name", "=", row.name)
          .execute();
      }
      for (const row of (await db.selectFrom("alert_channels").select(["id", "secret"]).execute()) as { id: string; secret: string }[]) {
        if (secrets.isSealed(row.secret)) continue;
        await db
          .updateTable("alert_channels")
          .set({ secret: secrets.seal(row.secret, channelSecretContext(row.id)) })
          .where("id", "=", row.id)
          .execute();
      }
    },
    async down() {
      throw new Error("gpudeck does not downgrade its database; restore a backup instead");
    },
  };
}
