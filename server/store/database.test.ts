/** The data layer against both databases it supports: SQLite (a temp file) and a throw-away PostgreSQL cluster. */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, redactDatabaseUrl, type Store } from "./database";
import { testDatabasesForFile } from "./testing/databases";
import { makeLegacyPanelDb } from "./testing/legacyPanelDb";

const dbs = testDatabasesForFile("the data layer");
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), "gpudeck-store-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.each(dbs.dialects)("the panel database on %s", (dialect) => {
  let store: Store;
  beforeAll(async () => {
    store = await (await dbs.fresh(dialect)).open();
  });
  afterAll(() => store?.close());

  it("migrates to the latest schema, and again is a no-op", async () => {
    const { migrateToLatest } = await import("./migrations");
    await migrateToLatest(store.db, store.dialect);
    const names = (await store.db.introspection.getTables()).map((t) => t.name);
    for (const t of ["users", "sessions", "setup_tokens", "audit_log", "hosts", "panel_events", "action_guard", "login_limits", "audit_once"])
      expect(names).toContain(t);
  });

  it("enforces foreign keys (deleting a user deletes their sessions) and the role check", async () => {
    const { id } = await store.db
      .insertInto("users")
      .values({ username: "fk", password_hash: null, role: "viewer", unit_patterns: "[]", created_at: 1, password_changed_at: null })
      .returning("id")
      .executeTakeFirstOrThrow();
    await store.db
      .insertInto("sessions")
      .values({ id_hash: "h-fk", user_id: id, created_at: 1, last_seen_at: 1, source_addr: null, user_agent: null })
      .execute();
    await expect(
      store.db
        .insertInto("sessions")
        .values({ id_hash: "x-fk", user_id: 999_999, created_at: 1, last_seen_at: 1, source_addr: null, user_agent: null })
        .execute(),
    ).rejects.toThrow(/foreign key|FOREIGN KEY/);
    await store.db.deleteFrom("users").where("id", "=", id).execute();
    expect(await store.db.selectFrom("sessions").selectAll().where("user_id", "=", id).execute()).toEqual([]);
    await expect(
      store.db
        .insertInto("users")
        .values({ username: "r", password_hash: null, role: "root" as "admin", unit_patterns: "[]", created_at: 1, password_changed_at: null })
        .execute(),
    ).rejects.toThrow(/check|CHECK/);
  });

  it("runs a write transaction as one: a failure inside leaves nothing behind", async () => {
    await expect(
      store.write(async (tx) => {
        await tx.insertInto("hosts").values({ name: "tx-h", url: "http://x", token: "t", created_at: 1, created_by: null, updated_at: 1 }).execute();
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    expect(await store.db.selectFrom("hosts").selectAll().where("name", "=", "tx-h").execute()).toEqual([]);
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
  it("creates a private data dir and panel.db readable by its owner only, in WAL mode with foreign keys", async () => {
    const dir = path.join(tempDir(), "nested", "data");
    const store = await openStore({ dataDir: dir });
    expect((await sql<{ journal_mode: string }>`pragma journal_mode`.execute(store.db)).rows[0]!.journal_mode).toBe("wal");
    expect((await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(store.db)).rows[0]!.foreign_keys).toBe(1);
    await store.close();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(dir, "panel.db")).mode & 0o777).toBe(0o600);
  });

  it("adopts a panel.db made by the older SQLite-only migrator, keeping its users, sessions, audit and hosts", async () => {
    const dir = tempDir();
    makeLegacyPanelDb(
      path.join(dir, "panel.db"),
      `INSERT INTO users (username, role, created_at) VALUES ('Root', 'admin', 1);
       INSERT INTO sessions (id_hash, user_id, created_at, last_seen_at) VALUES ('h', 1, 1, 1);
       INSERT INTO audit_log (at, user, action, outcome) VALUES (1, 'Root', 'login', 'ok');
       INSERT INTO hosts (name, url, token, created_at, updated_at) VALUES ('gpu-a', 'http://10.0.0.5:9300', 't', 1, 1);`,
    );
    const store = await openStore({ dataDir: dir });
    expect(await store.db.selectFrom("users").select("username").execute()).toEqual([{ username: "Root" }]);
    expect(await store.db.selectFrom("sessions").select("id_hash").execute()).toEqual([{ id_hash: "h" }]);
    expect(await store.db.selectFrom("audit_log").select("action").execute()).toEqual([{ action: "login" }]);
    expect(await store.db.selectFrom("hosts").select("name").execute()).toEqual([{ name: "gpu-a" }]);
    // and the newer tables are there too
    await store.db.insertInto("panel_events").values({ at: 1, kind: "hosts", body: "{}" }).execute();
    await store.close();
  });

  it("opened by two processes at once (the panel and the CLI on a new data dir), migrates once", async () => {
    const dir = tempDir();
    const [a, b] = await Promise.all([openStore({ dataDir: dir, busyTimeoutMs: 200 }), openStore({ dataDir: dir, busyTimeoutMs: 200 })]);
    expect(
      (
        await a.db
          .selectFrom("kysely_migration" as "users")
          .selectAll()
          .execute()
      ).length,
    ).toBeGreaterThan(0);
    await Promise.all([a.close(), b.close()]);
  });
});

describe.each(dbs.dialects)("a database written by a newer gpudeck, on %s", (dialect) => {
  it("is refused rather than downgraded, with a sentence saying so", async () => {
    const db = await dbs.fresh(dialect);
    const store = await db.open();
    await sql`insert into kysely_migration (name, timestamp) values ('999_from_the_future', ${new Date().toISOString()})`.execute(store.db);
    await store.close();
    await expect(db.open()).rejects.toThrow(/cannot prepare the panel database .*corrupted migrations.*999_from_the_future/);
  });
});

it("never shows a database password", () => {
  expect(redactDatabaseUrl("postgres://gpudeck:s3cret@db.example:5432/gpudeck")).toBe("postgres://gpudeck@db.example:5432/gpudeck");
});
