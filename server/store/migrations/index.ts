/**
 * Schema migrations (Kysely's Migrator), append-only: never edit a released one, add the next.
 * Each is written once for both databases; where they differ (auto-increment ids, 64-bit
 * integers) `dialect` says which. On PostgreSQL the Migrator holds an advisory lock, so replicas
 * starting together migrate once. The first migration also adopts a panel.db made by the older
 * SQLite-only migrator: every table and index is created only if missing.
 */
import { Migrator, type Kysely, type Migration, type MigrationProvider } from "kysely";
import type { Dialect } from "../dialect";
import { initialSchema } from "./001_initial";
import { alertsSchema } from "./002_alerts";
import { replicasSchema } from "./003_replicas";
import { secretsSchema } from "./004_secrets";
import type { SecretBox } from "../secretBox";
import { apiTokensSchema } from "./005_api_tokens";
import { oidcSchema } from "./006_oidc";
import { totpSchema } from "./007_totp";
import { pushSchema } from "./008_push";
import { alertLifecycleSchema } from "./009_alert_lifecycle";

/** `secrets`: the panel's key (../secretBox.ts), for migrations that seal stored secrets */
export type MigrationFactory = (dialect: Dialect, secrets?: SecretBox) => Migration;

/** In order; the key is the migration's name in the `kysely_migration` table. */
export const MIGRATIONS: [string, MigrationFactory][] = [
  ["001_initial", initialSchema],
  ["002_alerts", alertsSchema],
  ["003_replicas", replicasSchema],
  ["004_secrets", secretsSchema],
  ["005_api_tokens", apiTokensSchema],
  ["006_oidc", oidcSchema],
  ["007_totp", totpSchema],
  ["008_push", pushSchema],
  ["009_alert_lifecycle", alertLifecycleSchema],
];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run against whatever schema came before them
export async function migrateToLatest(db: Kysely<any>, dialect: Dialect, migrations = MIGRATIONS, secrets?: SecretBox): Promise<void> {
  const provider: MigrationProvider = {
    getMigrations: async () => Object.fromEntries(migrations.map(([name, make]) => [name, make(dialect, secrets)])),
  };
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error || failed) {
    const why = error instanceof Error ? error.message : String(error ?? "unknown error");
    throw new Error(failed ? `migration ${failed.migrationName} failed: ${why}` : why, { cause: error });
  }
}
