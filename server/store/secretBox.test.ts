/** Stored secrets encrypted at rest: migration 004 seals plain values on SQLite and PostgreSQL; another key is refused with a sentence. */
import { statSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { migrateToLatest, MIGRATIONS } from "./migrations";
import { channelSecretContext, hostTokenContext } from "./migrations/004_secrets";
import { loadSecretBox, SECRET_KEY_FILE, secretBoxFromKey } from "./secretBox";
import { testDatabasesForFile } from "./testing/databases";

const dbs = testDatabasesForFile("secrets at rest");
const TOKEN = "agent-token-0123456789abcdefghijklmnopqrstuv";
const SECRET = JSON.stringify({ url: "https://hooks.slack.com/services/T0/B0/very-secret" });

describe.each(dbs.dialects)("migration 004_secrets on %s", (dialect) => {
  it("seals the plain tokens and channel secrets a panel stored before, and reads them back", async () => {
    const t = await dbs.fresh(dialect);
    // a database as the panel left it before 004: plain text
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const old: Kysely<any> = t.databaseUrl
      ? new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: t.databaseUrl }) }) })
      : new Kysely({ dialect: new SqliteDialect({ database: new Database(path.join(t.dataDir, "panel.db")) }) });
    await migrateToLatest(old, dialect, MIGRATIONS.slice(0, 3));
    await old.insertInto("hosts").values({ name: "gpu-a", url: "http://10.0.0.5:9300", token: TOKEN, created_at: 1, updated_at: 1 }).execute();
    await old
      .insertInto("alert_channels")
      .values({ id: "ch-1", type: "slack", name: "ml", config: "{}", secret: SECRET, enabled: 1, created_at: 1, updated_at: 1 })
      .execute();
    await old.destroy();

    const store = await t.open({ secretKey: null });
    const host = await store.db.selectFrom("hosts").selectAll().executeTakeFirstOrThrow();
    const channel = await store.db.selectFrom("alert_channels").selectAll().executeTakeFirstOrThrow();
    expect(host.token).toMatch(/^gdsec1\.[0-9a-f]{8}\./);
    expect(host.token).not.toContain("0123456789abcdef");
    expect(channel.secret).not.toContain("very-secret");
    expect(store.secrets.open(host.token, hostTokenContext("gpu-a"))).toBe(TOKEN);
    expect(store.secrets.open(channel.secret, channelSecretContext("ch-1"))).toBe(SECRET);
    // bound to its row: moved to another host it does not open
    expect(() => store.secrets.open(host.token, hostTokenContext("gpu-b"))).toThrow(/cannot be decrypted/);
    expect(host).toMatchObject({ ca_pem: null, fingerprint: null, insecure_http: 0 });
    const keyFile = path.join(t.dataDir, SECRET_KEY_FILE);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    await store.close();

    // a replica (or a restore) with another key refuses to start, naming both keys and what to do
    const other = Buffer.alloc(32, 7).toString("base64");
    await expect(t.open({ secretKey: other })).rejects.toThrow(
      /was encrypted with secret key [0-9a-f]{8}, but this panel's key \(GPUDECK_SECRET_KEY\) is [0-9a-f]{8}/,
    );
  });
});

describe("the key", () => {
  it("GPUDECK_SECRET_KEY must be 32 bytes; a key file others may read is refused", async () => {
    expect(() => loadSecretBox({ dataDir: "/nonexistent", secretKey: "too-short" })).toThrow(
      /32 random bytes in base64 or hex \(make one with: openssl rand -base64 32\)/,
    );
    expect(loadSecretBox({ dataDir: "/nonexistent", secretKey: "ab".repeat(32) }).keyId).toMatch(/^[0-9a-f]{8}$/);
    const t = await dbs.fresh("sqlite");
    loadSecretBox({ dataDir: t.dataDir });
    const { chmodSync } = await import("node:fs");
    chmodSync(path.join(t.dataDir, SECRET_KEY_FILE), 0o644);
    expect(() => loadSecretBox({ dataDir: t.dataDir })).toThrow(/may be read by others \(mode 644\): chmod 600/);
  });

  it("seal then open gives the text back; each seal is different", () => {
    const box = secretBoxFromKey(Buffer.alloc(32, 1), "test");
    const a = box.seal("s3cret", "x");
    expect(a).not.toBe(box.seal("s3cret", "x"));
    expect(box.open(a, "x")).toBe("s3cret");
    expect(box.open("plain before 004", "x")).toBe("plain before 004");
  });
});
