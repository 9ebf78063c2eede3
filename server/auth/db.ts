/**
 * The panel's SQLite database (`<dataDir>/panel.db`): users, sessions, setup tokens, audit log.
 *
 * The path is always passed in — never computed at module top level — because Next's file
 * tracing would otherwise pull a local database file into the build.
 */
import Database from "better-sqlite3";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import { AuthError } from "./types";

export type PanelDb = Database.Database;

export const PANEL_DB_FILE = "panel.db";

interface Migration {
  version: number;
  sql: string;
}

/** Append-only: never edit a released migration, add a new one. */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        username TEXT NOT NULL UNIQUE COLLATE NOCASE,
        password_hash TEXT,
        role TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
        unit_patterns TEXT NOT NULL DEFAULT '[]',
        disabled INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
        created_at INTEGER NOT NULL,
        password_changed_at INTEGER
      );

      CREATE TABLE sessions (
        id_hash TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        created_at INTEGER NOT NULL,
        last_seen_at INTEGER NOT NULL,
        source_addr TEXT,
        user_agent TEXT
      );
      CREATE INDEX sessions_by_user ON sessions(user_id);

      CREATE TABLE setup_tokens (
        token_hash TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      );

      CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at INTEGER NOT NULL,
        user TEXT,
        role TEXT,
        source_addr TEXT,
        host TEXT,
        unit TEXT,
        action TEXT NOT NULL,
        reason TEXT,
        outcome TEXT NOT NULL,
        job_id INTEGER,
        detail TEXT
      );
      CREATE INDEX audit_by_at ON audit_log(at);
      CREATE INDEX audit_by_user ON audit_log(user COLLATE NOCASE, id);
      CREATE INDEX audit_by_unit ON audit_log(unit, id);
      CREATE INDEX audit_by_action ON audit_log(action, id);
      CREATE INDEX audit_by_job ON audit_log(host, job_id);
    `,
  },
  {
    // agents added on the Hosts page (file and environment hosts are not stored)
    version: 2,
    sql: `
      CREATE TABLE hosts (
        name TEXT PRIMARY KEY,
        url TEXT NOT NULL,
        token TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        created_by TEXT,
        updated_at INTEGER NOT NULL
      );
    `,
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

export interface OpenPanelDbOptions {
  /** Wait this long for a lock held by another process (the CLI vs the panel). Default 5000 ms. */
  busyTimeoutMs?: number;
}

/**
 * Open (creating if needed) and migrate `<dataDir>/panel.db`. A new data dir is created mode 0700
 * and a new database file mode 0600: it holds password hashes.
 */
export function openPanelDb(dataDir: string, options: OpenPanelDbOptions = {}): PanelDb {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, PANEL_DB_FILE);
  // Create the file ourselves so it never exists with the umask's looser mode; SQLite gives the
  // -wal and -shm files the database file's mode.
  closeSync(openSync(file, "a", 0o600));
  const db = new Database(file, { timeout: options.busyTimeoutMs ?? 5000 });
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    migrate(db);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/** Current schema version of an open database (0 when never migrated). */
export function schemaVersion(db: PanelDb): number {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    applied_at INTEGER NOT NULL
  )`);
  const row = db.prepare("SELECT MAX(version) AS v FROM schema_migrations").get() as { v: number | null };
  return row.v ?? 0;
}

/** Apply pending migrations, each in its own IMMEDIATE transaction so two processes cannot race. */
export function migrate(db: PanelDb, migrations: readonly Migration[] = MIGRATIONS): void {
  schemaVersion(db); // ensures the table exists
  const latest = migrations[migrations.length - 1]?.version ?? 0;
  for (const m of migrations) {
    const apply = db.transaction(() => {
      const current = schemaVersion(db);
      if (current >= m.version) return;
      db.exec(m.sql);
      db.prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)").run(m.version, Date.now());
    });
    apply.immediate();
  }
  const current = schemaVersion(db);
  if (current > latest) {
    throw new AuthError("schema-too-new", `panel.db has schema version ${current} but this gpudeck knows only up to ${latest}; refusing to downgrade`);
  }
}
