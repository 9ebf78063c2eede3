/**
 * The panel's database: SQLite (`<data dir>/panel.db`, embedded, nothing to run) by default, or
 * PostgreSQL when `GPUDECK_DATABASE_URL` is set (for several panel replicas). One Kysely code
 * path for both; migrations run at open (on PostgreSQL under an advisory lock, so replicas can
 * start together).
 */
import { closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect, sql } from "kysely";
import pg from "pg";
import { migrateToLatest } from "./migrations";
import type { PanelSchema } from "./schema";

export const PANEL_DB_FILE = "panel.db";

export type Dialect = "sqlite" | "postgres";

export interface Store {
  readonly db: Kysely<PanelSchema>;
  readonly dialect: Dialect;
  /** where it is, for logs and /healthz (never a password) */
  readonly where: string;
  /** the database's own clock, ms: one clock for every replica (the action guard, limits) */
  nowMs(): Promise<number>;
  close(): Promise<void>;
}

export interface OpenStoreOptions {
  dataDir: string;
  /** postgres://… ; when absent, SQLite in dataDir */
  databaseUrl?: string | null;
  /** SQLite: wait this long for a lock held by another process (the CLI vs the panel). Default 5000 ms. */
  busyTimeoutMs?: number;
  /** PostgreSQL: connections in the pool. Default 10. */
  poolSize?: number;
}

/** "postgres://user:secret@db:5432/gpudeck" → "postgres://user@db:5432/gpudeck". */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = "";
    return u.toString();
  } catch {
    return "(an unparsable database URL)";
  }
}

// int8 (bigint) comes back from pg as a string unless told otherwise; our int8 columns are ms
// timestamps and ids, well inside Number's safe range.
const INT8_OID = 20;
const pgTypes = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const store = options.databaseUrl ? openPostgres(options.databaseUrl, options.poolSize ?? 10) : openSqlite(options.dataDir, options.busyTimeoutMs ?? 5000);
  try {
    await migrateToLatest(store.db, store.dialect);
  } catch (err) {
    await store.close();
    throw new Error(`cannot prepare the panel database (${store.where}): ${(err as Error).message}`);
  }
  return store;
}

function openSqlite(dataDir: string, busyTimeoutMs: number): Store {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, PANEL_DB_FILE);
  // create the file ourselves so it never exists with the umask's looser mode (it holds password hashes)
  closeSync(openSync(file, "a", 0o600));
  const sqlite = new Database(file, { timeout: busyTimeoutMs });
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  const db = new Kysely<PanelSchema>({ dialect: new SqliteDialect({ database: sqlite }) });
  return {
    db,
    dialect: "sqlite",
    where: `SQLite ${file}`,
    nowMs: async () => Date.now(),
    close: () => db.destroy(),
  };
}

function openPostgres(url: string, max: number): Store {
  const pool = new pg.Pool({ connectionString: url, max, types: pgTypes });
  // an idle client that loses its server must not crash the process; the next query reports it
  pool.on("error", () => undefined);
  const db = new Kysely<PanelSchema>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: "postgres",
    where: `PostgreSQL ${redactDatabaseUrl(url)}`,
    nowMs: async () => {
      const r = await sql<{ ms: number }>`select (extract(epoch from clock_timestamp()) * 1000)::int8 as ms`.execute(db);
      return r.rows[0]!.ms;
    },
    close: () => db.destroy(),
  };
}
