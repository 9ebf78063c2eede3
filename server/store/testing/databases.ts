/**
 * Test-only: run a suite against both databases the panel supports. `testDatabasesForFile()` (at a
 * test file's top level) starts one throw-away PostgreSQL cluster for the file when PostgreSQL is
 * installed (in CI it must be: see ./pgCluster.ts) and gives each test a database of its own:
 * a fresh SQLite data dir, or a fresh database on the cluster (~0.3 s each; a schema per test
 * would be faster, but Kysely's Migrator looks for its tables in every schema). `open()` may be
 * called more than once on one TestDb: two stores on one database are two replicas.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { openStore, type Dialect, type OpenStoreOptions, type Store } from "../database";
import { skipWithoutPg, startPgCluster, type PgCluster } from "./pgCluster";

export interface TestDb {
  dialect: Dialect;
  dataDir: string;
  databaseUrl: string | null;
  /** a store on this database (each call: another process's view, e.g. a second replica) */
  open(options?: Partial<OpenStoreOptions>): Promise<Store>;
}

export interface TestDatabases {
  dialects: Dialect[];
  fresh(dialect: Dialect): Promise<TestDb>;
  /** the cluster (PostgreSQL runs): its URL, and pause/resume for "the database went away" */
  cluster(): PgCluster;
}

let counter = 0;

export function testDatabasesForFile(what: string): TestDatabases {
  const noPg = skipWithoutPg(`${what} on PostgreSQL`);
  let cluster: PgCluster | null = null;
  const dirs: string[] = [];
  const stores: Store[] = [];
  beforeAll(async () => {
    if (!noPg) cluster = await startPgCluster();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close().catch(() => undefined)));
    cluster?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  return {
    dialects: noPg ? ["sqlite"] : ["sqlite", "postgres"],
    cluster: () => cluster!,
    async fresh(dialect) {
      const dataDir = mkdtempSync(path.join(tmpdir(), "gpudeck-db-"));
      dirs.push(dataDir);
      let databaseUrl: string | null = null;
      if (dialect === "postgres") {
        const name = `t${process.pid}_${++counter}`;
        const admin = new pg.Client({ connectionString: cluster!.url });
        await admin.connect();
        try {
          await admin.query(`CREATE DATABASE ${name}`);
        } finally {
          await admin.end();
        }
        const u = new URL(cluster!.url);
        u.pathname = `/${name}`;
        databaseUrl = u.toString();
      }
      return {
        dialect,
        dataDir,
        databaseUrl,
        async open(options = {}) {
          const store = await openStore({ dataDir, databaseUrl, poolSize: 4, ...options });
          const close = store.close.bind(store);
          let closed = false;
          stores.push(Object.assign(store, { close: () => (closed ? Promise.resolve() : ((closed = true), close())) }));
          return store;
        },
      };
    },
  };
}
