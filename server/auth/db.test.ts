import { statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrate, openPanelDb, SCHEMA_VERSION, schemaVersion, type PanelDb } from "./db";
import { AuthError } from "./types";
import { tempDataDir } from "./testHelpers";

describe("openPanelDb", () => {
  let tmp: ReturnType<typeof tempDataDir>;
  const open: PanelDb[] = [];
  beforeEach(() => {
    tmp = tempDataDir();
  });
  afterEach(() => {
    for (const db of open.splice(0)) if (db.open) db.close();
    tmp.cleanup();
  });

  it("creates a private data dir and database file, in WAL mode with foreign keys", () => {
    const dataDir = join(tmp.dir, "nested", "data");
    const db = openPanelDb(dataDir);
    open.push(db);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dataDir, "panel.db")).mode & 0o777).toBe(0o600);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
    expect(schemaVersion(db)).toBe(SCHEMA_VERSION);
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name);
    expect(tables).toEqual(expect.arrayContaining(["users", "sessions", "setup_tokens", "audit_log", "schema_migrations"]));
  });

  it("is idempotent: reopening does not re-apply migrations or lose data", () => {
    const db = openPanelDb(tmp.dir);
    db.prepare("INSERT INTO users (username, role, created_at) VALUES ('a', 'viewer', 1)").run();
    db.close();
    const again = openPanelDb(tmp.dir);
    open.push(again);
    expect((again.prepare("SELECT COUNT(*) AS n FROM schema_migrations").get() as { n: number }).n).toBe(SCHEMA_VERSION);
    expect((again.prepare("SELECT COUNT(*) AS n FROM users").get() as { n: number }).n).toBe(1);
  });

  it("applies new migrations in order, once each", () => {
    const db = openPanelDb(tmp.dir);
    open.push(db);
    const extra = [
      { version: SCHEMA_VERSION + 1, sql: "CREATE TABLE t1 (x INTEGER)" },
      { version: SCHEMA_VERSION + 2, sql: "INSERT INTO t1 VALUES (42)" },
    ];
    migrate(db, extra);
    migrate(db, extra);
    expect(schemaVersion(db)).toBe(SCHEMA_VERSION + 2);
    expect(db.prepare("SELECT x FROM t1").all()).toEqual([{ x: 42 }]);
  });

  it("rolls back a failing migration and records nothing for it", () => {
    const db = openPanelDb(tmp.dir);
    open.push(db);
    expect(() => migrate(db, [{ version: SCHEMA_VERSION + 1, sql: "CREATE TABLE t2 (x); THIS IS NOT SQL" }])).toThrow();
    expect(schemaVersion(db)).toBe(SCHEMA_VERSION);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 't2'").get()).toBeUndefined();
  });

  it("refuses a database written by a newer gpudeck", () => {
    const db = openPanelDb(tmp.dir);
    db.prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)").run(SCHEMA_VERSION + 5);
    db.close();
    expect(() => openPanelDb(tmp.dir)).toThrow(AuthError);
    expect(() => openPanelDb(tmp.dir)).toThrow(/refusing to downgrade/);
  });

  it("enforces foreign keys: deleting a user deletes their sessions", () => {
    const db = openPanelDb(tmp.dir);
    open.push(db);
    const id = Number(db.prepare("INSERT INTO users (username, role, created_at) VALUES ('a', 'viewer', 1)").run().lastInsertRowid);
    db.prepare("INSERT INTO sessions (id_hash, user_id, created_at, last_seen_at) VALUES ('h', ?, 1, 1)").run(id);
    expect(() => db.prepare("INSERT INTO sessions (id_hash, user_id, created_at, last_seen_at) VALUES ('x', 999, 1, 1)").run()).toThrow(/FOREIGN KEY/);
    db.prepare("DELETE FROM users WHERE id = ?").run(id);
    expect((db.prepare("SELECT COUNT(*) AS n FROM sessions").get() as { n: number }).n).toBe(0);
  });

  it("rejects roles outside viewer/operator/admin at the database level", () => {
    const db = openPanelDb(tmp.dir);
    open.push(db);
    expect(() => db.prepare("INSERT INTO users (username, role, created_at) VALUES ('a', 'root', 1)").run()).toThrow(/CHECK/);
  });
});
