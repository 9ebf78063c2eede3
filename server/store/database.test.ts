/** The data layer against both databases it supports: SQLite (a temp file) and a throw-away PostgreSQL cluster. */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, redactDatabaseUrl, type Store } from "./database";
import { skipWithoutPg, startPgCluster, type PgCluster } from "./testing/pgCluster";

const noPg = skipWithoutPg("the PostgreSQL data-layer tests");
let cluster: PgCluster | null = null;
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), "gpudeck-store-"));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  if (!noPg) cluster = await startPgCluster();
}, 60_000);
afterAll(() => {
  cluster?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const dialects = [
  { name: "sqlite", open: () => openStore({ dataDir: tempDir() }) },
  ...(noPg ? [] : [{ name: "postgres", open: () => openStore({ dataDir: tempDir(), databaseUrl: cluster!.url }) }]),
];

describe.each(dialects)("the panel database on $name", ({ open }) => {
  let store: Store;
  beforeAll(async () => {
    store = await open();
  });
  afterAll(() => store?.close());

  it("migrates to the latest schema, and again is a no-op", async () => {
    const { migrateToLatest } = await import("./migrations");
    await migrateToLatest(store.db, store.dialect);
    const names = (await store.db.introspection.getTables()).map((t) => t.name);
    for (const t of ["users", "sessions", "setup_tokens", "audit_log", "hosts", "panel_events", "action_guard"]) expect(names).toContain(t);
  });

  it("gives ids and 64-bit times back as numbers, and keeps user names unique regardless of case", async () => {
    const at = Date.UTC(2031, 0, 1); // beyond 2^31 seconds' worth of ms, and beyond int4
    const row = await store.db
      .insertInto("users")
      .values({ username: "Ada", password_hash: null, role: "admin", unit_patterns: "[]", created_at: at, password_changed_at: null })
      .returning(["id", "created_at"])
      .executeTakeFirstOrThrow();
    expect(typeof row.id).toBe("number");
    expect(row.created_at).toBe(at);
    await expect(
      store.db
        .insertInto("users")
        .values({ username: "ada", password_hash: null, role: "viewer", unit_patterns: "[]", created_at: at, password_changed_at: null })
        .execute(),
    ).rejects.toThrow(/unique|UNIQUE/);
  });

  it("reads the database's clock", async () => {
    const now = await store.nowMs();
    expect(Math.abs(now - Date.now())).toBeLessThan(60_000);
  });
});

describe("SQLite specifics", () => {
  it("creates panel.db readable by its owner only", async () => {
    const dir = tempDir();
    const store = await openStore({ dataDir: dir });
    await store.close();
    expect(statSync(path.join(dir, "panel.db")).mode & 0o777).toBe(0o600);
  });

  it("adopts a panel.db made by the older SQLite-only migrator (its tables exist already)", async () => {
    const dir = tempDir();
    const legacy = new Database(path.join(dir, "panel.db"));
    legacy.exec(`CREATE TABLE users (id INTEGER PRIMARY KEY, username TEXT NOT NULL UNIQUE COLLATE NOCASE, password_hash TEXT,
      role TEXT NOT NULL, unit_patterns TEXT NOT NULL DEFAULT '[]', disabled INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL, password_changed_at INTEGER);
      CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL); INSERT INTO schema_migrations VALUES (1, 0);
      INSERT INTO users (username, role, created_at) VALUES ('root', 'admin', 1);`);
    legacy.close();
    const store = await openStore({ dataDir: dir });
    expect(await store.db.selectFrom("users").select("username").execute()).toEqual([{ username: "root" }]);
    await store.close();
  });
});

it("never shows a database password", () => {
  expect(redactDatabaseUrl("postgres://gpudeck:s3cret@db.example:5432/gpudeck")).toBe("postgres://gpudeck@db.example:5432/gpudeck");
});
