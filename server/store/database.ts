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
import { channelSecretContext, hostTokenContext } from "./migrations/004_secrets";
import type { PanelSchema } from "./schema";
import { loadSecretBox, SecretKeyError, type SecretBox } from "./secretBox";

export const PANEL_DB_FILE = "panel.db";

export type { Dialect } from "./dialect";
import type { Dialect } from "./dialect";

export type Db = Kysely<PanelSchema>;

export interface WriteOptions {
  /**
   * PostgreSQL: take this transaction-scoped advisory lock first, so writes that check before
   * they change (the last admin, a user name being free) run one at a time across replicas.
   * SQLite needs none: a write transaction there is one at a time already (BEGIN IMMEDIATE).
   */
  lock?: string;
}

export interface Store {
  readonly db: Db;
  readonly dialect: Dialect;
  /** where it is, for logs (never a password) */
  readonly where: string;
  /** seals and opens the secrets stored in it (./secretBox.ts); the key is not in the database */
  readonly secrets: SecretBox;
  /** the database's own clock, ms: one clock for every replica (the action guard, limits) */
  nowMs(): Promise<number>;
  /**
   * One write transaction. SQLite: BEGIN IMMEDIATE (the write lock up front, so a check and the
   * change after it cannot interleave with another process, the CLI say); PostgreSQL: a plain
   * transaction, behind `options.lock` when given. Use only `tx` inside: on SQLite `db` waits for
   * the one connection `tx` holds.
   */
  write<T>(fn: (tx: Db) => Promise<T>, options?: WriteOptions): Promise<T>;
  /** SQLite: run `fn` while Kysely's one connection is held, so no Kysely transaction is open meanwhile (for `sqliteHandle`). */
  withSqliteHandle?<T>(fn: (handle: Database.Database) => T | Promise<T>): Promise<T>;
  /** SQLite: the better-sqlite3 handle under Kysely; use it only inside `withSqliteHandle`. */
  readonly sqliteHandle?: Database.Database;
  /** PostgreSQL: the pool Kysely uses (rate-limiter-flexible's store shares it). */
  readonly pgPool?: pg.Pool;
  /** PostgreSQL: a new client of its own, not from the pool (one LISTEN connection). */
  newPgClient?(): pg.Client;
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
  /** PostgreSQL: give up connecting after this long, so a request fails with a clear error rather than hang. Default 5000 ms. */
  connectTimeoutMs?: number;
  /** The key for stored secrets (GPUDECK_SECRET_KEY, the default); without one, `<dataDir>/secret-key` (./secretBox.ts). */
  secretKey?: string | null;
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
  // the key first: a panel without its key must not touch the database
  const secrets = loadSecretBox({ dataDir: options.dataDir, secretKey: options.secretKey === undefined ? process.env.GPUDECK_SECRET_KEY : options.secretKey });
  const store = options.databaseUrl
    ? openPostgres(options.databaseUrl, options.poolSize ?? 10, options.connectTimeoutMs ?? 5000, secrets)
    : openSqlite(options.dataDir, options.busyTimeoutMs ?? 5000, secrets);
  try {
    await migrate(store);
    await checkSecretKey(store);
  } catch (err) {
    await store.close();
    throw new Error(`cannot prepare the panel database (${store.where}): ${(err as Error).message}`, { cause: err });
  }
  return store;
}

/**
 * PostgreSQL: the Migrator's advisory lock lets one replica migrate while the others wait. SQLite
 * has no such lock across processes: two opening a new file together (the panel and the CLI) may
 * both try the first migration; the loser's transaction rolls back, and trying again finds the
 * work done.
 */
async function migrate(store: Store): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrateToLatest(store.db, store.dialect, undefined, store.secrets);
    } catch (err) {
      if (store.dialect !== "sqlite" || attempt >= 3) throw err;
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}

/**
 * A replica (or a restored panel) with another key than the one the stored secrets were sealed
 * with refuses to start, saying which key it needs, rather than failing on every send.
 */
async function checkSecretKey(store: Store): Promise<void> {
  const host = await store.db.selectFrom("hosts").select(["name", "token"]).limit(1).executeTakeFirst();
  if (host) store.secrets.open(host.token, hostTokenContext(host.name));
  const channel = await store.db.selectFrom("alert_channels").select(["id", "secret"]).limit(1).executeTakeFirst();
  if (channel) store.secrets.open(channel.secret, channelSecretContext(channel.id));
}

export { SecretKeyError };

function openSqlite(dataDir: string, busyTimeoutMs: number, secrets: SecretBox): Store {
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
    secrets,
    where: `SQLite ${file}`,
    nowMs: async () => Date.now(),
    write: (fn) =>
      db.connection().execute(async (conn) => {
        await sql`begin immediate`.execute(conn);
        try {
          const result = await fn(conn);
          await sql`commit`.execute(conn);
          return result;
        } catch (err) {
          if (sqlite.inTransaction) await sql`rollback`.execute(conn);
          throw err;
        }
      }),
    withSqliteHandle: (fn) => db.connection().execute(async () => fn(sqlite)),
    sqliteHandle: sqlite,
    close: () => db.destroy(),
  };
}

function openPostgres(url: string, max: number, connectTimeoutMs: number, secrets: SecretBox): Store {
  const config = { connectionString: url, types: pgTypes, connectionTimeoutMillis: connectTimeoutMs };
  const pool = new pg.Pool({ ...config, max });
  // a client that loses its server must not crash the process: an idle one is reported to the pool
  // (here), one in use also emits 'error' on itself while its query is rejected (pg-pool takes its
  // own listener off while a client is lent out), and that query's caller gets the error
  pool.on("error", () => undefined);
  pool.on("connect", (client) => client.on("error", () => undefined));
  const db = new Kysely<PanelSchema>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: "postgres",
    secrets,
    where: `PostgreSQL ${redactDatabaseUrl(url)}`,
    nowMs: async () => {
      const r = await sql<{ ms: number }>`select ${pgNowMs} as ms`.execute(db);
      return r.rows[0]!.ms;
    },
    write: (fn, options) =>
      db.transaction().execute(async (tx) => {
        if (options?.lock) await sql`select pg_advisory_xact_lock(hashtext(${options.lock}))`.execute(tx);
        return fn(tx);
      }),
    pgPool: pool,
    newPgClient: () => new pg.Client(config),
    close: () => db.destroy(),
  };
}

/** PostgreSQL's clock in ms, as an SQL expression (clock_timestamp: the time now, not the transaction's start). */
export const pgNowMs = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::int8`;
