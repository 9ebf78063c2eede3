/**
 * Test-only: a panel.db exactly as the SQLite-only migrator of earlier gpudeck versions left it
 * (its schema versions 1 and 2, verbatim, and its `schema_migrations` table), for the test that
 * migration 001 adopts such a file. That migrator is gone; this is what it made.
 */
import Database from "better-sqlite3";

const LEGACY_V1 = `
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
    `;

const LEGACY_V2 = `
      CREATE TABLE hosts (
        name TEXT PRIMARY KEY,
        url TEXT NOT NULL,
        token TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        created_by TEXT,
        updated_at INTEGER NOT NULL
      );
    `;

/** Create `<file>` as the legacy migrator did, then run `seed` (its own SQL) on it. */
export function makeLegacyPanelDb(file: string, seed = ""): void {
  const db = new Database(file);
  try {
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
    db.exec(LEGACY_V1);
    db.exec("INSERT INTO schema_migrations (version, applied_at) VALUES (1, 0)");
    db.exec(LEGACY_V2);
    db.exec("INSERT INTO schema_migrations (version, applied_at) VALUES (2, 0)");
    if (seed) db.exec(seed);
  } finally {
    db.close();
  }
}
