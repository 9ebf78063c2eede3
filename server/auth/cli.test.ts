import { execFile } from "node:child_process";
import { PassThrough, Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeEach, describe, expect, it } from "vitest";
import { fixedStore } from "../store/lazyStore";
import { testDatabasesForFile, type TestDb } from "../store/testing/databases";
import { runUserCli, type CliIo } from "./cli";
import { AuditStore } from "./audit";
import { SessionStore } from "./sessions";
import { codeAt, TotpStore } from "./totp";
import { UserStore } from "./users";

const dbs = testDatabasesForFile("npm run user");

/** The CLI's environment for this database: a data dir, and the URL when it is PostgreSQL. */
const envOf = (db: TestDb) => ({ GPUDECK_DATA_DIR: db.dataDir, ...(db.databaseUrl ? { GPUDECK_DATABASE_URL: db.databaseUrl } : {}) });

const PW = "correct horse battery staple";

interface Captured {
  io: CliIo;
  out(): string;
  err(): string;
}

function pipedIo(db: TestDb, stdinText = ""): Captured {
  let out = "";
  let err = "";
  const stdin = Readable.from([Buffer.from(stdinText)]) as CliIo["stdin"];
  return {
    io: {
      env: envOf(db),
      stdin,
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: (t: string) => (err += t) },
    },
    out: () => out,
    err: () => err,
  };
}

/** A fake terminal: isTTY, setRawMode, and keystrokes typed after each prompt appears. */
function ttyIo(db: TestDb, answers: string[]): Captured & { rawModes: boolean[] } {
  let out = "";
  let err = "";
  const rawModes: boolean[] = [];
  const stdin = new PassThrough() as PassThrough & { isTTY: boolean; setRawMode(raw: boolean): void };
  stdin.isTTY = true;
  stdin.setRawMode = (raw: boolean) => {
    rawModes.push(raw);
    err += `<raw:${raw}>`;
  };
  const queue = [...answers];
  return {
    rawModes,
    io: {
      env: envOf(db),
      stdin,
      stdout: { write: (t: string) => (out += t) },
      stderr: {
        write: (t: string) => {
          err += t;
          if (/: $/.test(t) && queue.length) {
            const keys = queue.shift()!;
            setImmediate(() => stdin.write(keys));
          }
        },
      },
    },
    out: () => out,
    err: () => err,
  };
}

describe.each(dbs.dialects)("npm run user on %s", (dialect) => {
  let tdb: TestDb;
  beforeEach(async () => {
    tdb = await dbs.fresh(dialect);
  });

  /** What a running panel sees: its own store on the same database. */
  async function withStores<T>(fn: (users: UserStore, audit: AuditStore, sessions: SessionStore) => T | Promise<T>): Promise<T> {
    const store = await tdb.open();
    try {
      const source = fixedStore(store);
      return await fn(new UserStore(source), new AuditStore(source), new SessionStore(source));
    } finally {
      await store.close();
    }
  }

  it("adds an operator with unit patterns, password from stdin", async () => {
    const c = pipedIo(tdb, `${PW}\n`);
    expect(await runUserCli(["add", "alice", "--role", "operator", "--units", "vllm-team-a-*,tgi-a-*", "--units", "x-*"], c.io)).toBe(0);
    expect(c.out()).toBe("created operator 'alice' for units vllm-team-a-*, tgi-a-*, x-*\n");
    await withStores(async (users, audit) => {
      expect(await users.getUser("alice")).toMatchObject({ role: "operator", unitPatterns: ["vllm-team-a-*", "tgi-a-*", "x-*"] });
      expect((await users.verifyCredentials("alice", PW)).ok).toBe(true);
      expect((await audit.queryAudit({ action: "user.add" }))[0]).toMatchObject({ outcome: "ok", detail: expect.stringMatching(/^user=alice role=operator/) });
    });
  });

  it("--password-stdin keeps spaces and strips only the final newline", async () => {
    const c = pipedIo(tdb, `  ${PW}  \r\n`);
    expect(await runUserCli(["add", "bob", "--role", "viewer", "--password-stdin"], c.io)).toBe(0);
    await withStores(async (users) => expect((await users.verifyCredentials("bob", `  ${PW}  `)).ok).toBe(true));
  });

  it("prompts twice without echo on a terminal", async () => {
    const c = ttyIo(tdb, [`${PW}x\u007f\r`, `${PW}\r`]);
    expect(await runUserCli(["add", "carol", "--role", "admin"], c.io)).toBe(0);
    // echo goes off before each prompt appears and back on after the answer
    expect(c.err()).toBe("<raw:true>New password for carol: <raw:false>\n<raw:true>Repeat it: <raw:false>\n");
    expect(c.err()).not.toContain(PW);
    expect(c.out()).not.toContain(PW);
    expect(c.rawModes).toEqual([true, false, true, false]);
    await withStores(async (users) => expect((await users.verifyCredentials("carol", PW)).ok).toBe(true));
  });

  it("refuses mismatched prompted passwords", async () => {
    const c = ttyIo(tdb, [`${PW}\r`, `${PW}!\r`]);
    expect(await runUserCli(["add", "carol", "--role", "admin"], c.io)).toBe(1);
    expect(c.err()).toMatch(/passwords do not match/);
    await withStores(async (users) => expect(await users.getUser("carol")).toBeNull());
  });

  it("Ctrl-C at the prompt cancels", async () => {
    const c = ttyIo(tdb, ["abc\u0003"]);
    expect(await runUserCli(["passwd", "nobody"], c.io)).toBe(1);
    expect(c.err()).toMatch(/no user named 'nobody'/);
    await runUserCli(["add", "dave", "--role", "viewer", "--no-password"], pipedIo(tdb).io);
    const c2 = ttyIo(tdb, ["abc\u0003"]);
    expect(await runUserCli(["passwd", "dave"], c2.io)).toBe(1);
    expect(c2.err()).toMatch(/cancelled/);
    expect(c2.rawModes.at(-1)).toBe(false);
  });

  it("passwd changes the password and ends the user's sessions", async () => {
    await runUserCli(["add", "alice", "--role", "viewer"], pipedIo(tdb, PW).io);
    const id = await withStores(async (users, _a, sessions) => (await sessions.createSession((await users.getUser("alice"))!.id)).id);
    const c = pipedIo(tdb, "a whole new passphrase\n");
    expect(await runUserCli(["passwd", "alice"], c.io)).toBe(0);
    expect(c.out()).toMatch(/sessions were ended/);
    await withStores(async (users, _a, sessions) => {
      expect((await sessions.validateSession(id)).ok).toBe(false);
      expect((await users.verifyCredentials("alice", "a whole new passphrase")).ok).toBe(true);
    });
  });

  it("disable / enable", async () => {
    await runUserCli(["add", "root", "--role", "admin"], pipedIo(tdb, PW).io);
    await runUserCli(["add", "alice", "--role", "viewer"], pipedIo(tdb, PW).io);
    const id = await withStores(async (users, _a, sessions) => (await sessions.createSession((await users.getUser("alice"))!.id)).id);
    expect(await runUserCli(["disable", "alice"], pipedIo(tdb).io)).toBe(0);
    await withStores(async (users, _a, sessions) => {
      expect((await users.getUser("alice"))!.disabled).toBe(true);
      expect((await sessions.validateSession(id)).ok).toBe(false);
    });
    expect(await runUserCli(["enable", "alice"], pipedIo(tdb).io)).toBe(0);
    await withStores(async (users) => expect((await users.getUser("alice"))!.disabled).toBe(false));
    const last = pipedIo(tdb);
    expect(await runUserCli(["disable", "root"], last.io)).toBe(1);
    expect(last.err()).toBe("error: refusing to disable the last enabled admin\n");
  });

  it("reset-2fa turns a user's two-factor sign-in off, audited", async () => {
    await runUserCli(["add", "alice", "--role", "admin"], pipedIo(tdb, PW).io);
    await withStores(async (users) => {
      const store = await tdb.open();
      try {
        const totp = new TotpStore(fixedStore(store));
        const id = (await users.getUser("alice"))!.id;
        const { secret } = await totp.begin(id, "alice");
        await totp.confirm(id, codeAt(secret, Date.now()));
        expect(await totp.isEnabled(id)).toBe(true);
      } finally {
        await store.close();
      }
    });
    const c = pipedIo(tdb);
    expect(await runUserCli(["reset-2fa", "alice"], c.io)).toBe(0);
    expect(c.out()).toBe("two-factor sign-in of 'alice' reset\n");
    const again = pipedIo(tdb);
    expect(await runUserCli(["reset-2fa", "alice"], again.io)).toBe(0);
    expect(again.out()).toBe("'alice' had no two-factor sign-in\n");
    await withStores(async (users, audit) => {
      const store = await tdb.open();
      try {
        expect(await new TotpStore(fixedStore(store)).isEnabled((await users.getUser("alice"))!.id)).toBe(false);
      } finally {
        await store.close();
      }
      expect((await audit.queryAudit({ action: "user.2fa.reset" })).map((r) => r.detail)).toEqual([
        "user=alice had no two-factor sign-in",
        "user=alice two-factor sign-in reset",
      ]);
    });
    expect(await runUserCli(["reset-2fa", "nobody"], pipedIo(tdb).io)).toBe(1);
  });

  it("set changes role and units", async () => {
    await runUserCli(["add", "alice", "--role", "viewer"], pipedIo(tdb, PW).io);
    const c = pipedIo(tdb);
    expect(await runUserCli(["set", "alice", "--role", "operator", "--units", "vllm-*"], c.io)).toBe(0);
    expect(c.out()).toBe("'alice' is now operator for units vllm-*\n");
    expect(await runUserCli(["set", "alice", "--units", ""], pipedIo(tdb).io)).toBe(0);
    await withStores(async (users) => expect(await users.getUser("alice")).toMatchObject({ role: "operator", unitPatterns: [] }));
  });

  it("list prints a table, or JSON without hashes", async () => {
    const empty = pipedIo(tdb);
    expect(await runUserCli(["list"], empty.io)).toBe(0);
    expect(empty.out()).toMatch(/no users yet/);
    await runUserCli(["add", "alice", "--role", "operator", "--units", "vllm-*"], pipedIo(tdb, PW).io);
    await runUserCli(["add", "proxyuser", "--role", "viewer", "--no-password"], pipedIo(tdb).io);
    const table = pipedIo(tdb);
    expect(await runUserCli(["list"], table.io)).toBe(0);
    const lines = table.out().trimEnd().split("\n");
    expect(lines[0]).toMatch(/^USER\s+ROLE\s+STATUS\s+UNITS\s+PASSWORD CHANGED\s+CREATED$/);
    expect(lines[1]).toMatch(/^alice\s+operator\s+enabled\s+vllm-\*\s+\d{4}-/);
    expect(lines[2]).toMatch(/^proxyuser\s+viewer\s+enabled\s+-\s+\(no password\)/);
    const json = pipedIo(tdb);
    expect(await runUserCli(["list", "--json"], json.io)).toBe(0);
    const parsed = JSON.parse(json.out()) as { username: string }[];
    expect(parsed.map((u) => u.username)).toEqual(["alice", "proxyuser"]);
    expect(json.out()).not.toMatch(/argon2|password_hash/);
  });

  it("setup-token prints a one-time link only while there is no admin", async () => {
    const c = pipedIo(tdb);
    expect(await runUserCli(["setup-token", "--url", "https://panel.example/"], c.io)).toBe(0);
    const token = /setup#token=([A-Za-z0-9_-]{43})\n$/.exec(c.out())?.[1];
    expect(token).toBeDefined();
    await withStores(async (users) => {
      await users.completeSetup(token!, "root", PW);
    });
    const again = pipedIo(tdb);
    expect(await runUserCli(["setup-token"], again.io)).toBe(1);
    expect(again.err()).toMatch(/already exists/);
  });

  it("gives clear errors with usage for bad invocations", async () => {
    const cases: [string[], number, RegExp][] = [
      [[], 2, /usage:/],
      [["frobnicate"], 2, /unknown command 'frobnicate'/],
      [["add", "alice"], 2, /add needs --role/],
      [["add", "alice", "--role", "root"], 2, /--role must be viewer, operator or admin/],
      [["add", "--role", "viewer"], 2, /exactly one user name/],
      [["add", "a", "b", "--role", "viewer"], 2, /exactly one user name/],
      [["add", "alice", "--role", "viewer", "--bogus"], 2, /Unknown option '--bogus'/],
      [["add", "-rf", "--role", "viewer"], 2, /Unknown option/],
      [["add", "alice", "--role", "operator", "--units", "$(reboot)"], 1, /unit pattern/],
      [["passwd", "ghost"], 1, /no user named 'ghost'/],
      [["enable", "ghost"], 1, /no user named 'ghost'/],
      [["set", "ghost"], 2, /set needs --role and\/or --units/],
      [["list", "extra"], 2, /list takes no arguments/],
    ];
    for (const [argv, code, message] of cases) {
      const c = pipedIo(tdb, `${PW}\n`);
      expect(await runUserCli(argv, c.io), argv.join(" ")).toBe(code);
      expect(c.err(), argv.join(" ")).toMatch(message);
    }
    const weak = pipedIo(tdb, "short\n");
    expect(await runUserCli(["add", "alice", "--role", "viewer"], weak.io)).toBe(1);
    expect(weak.err()).toBe("error: password must be at least 12 characters\n");
    const empty = pipedIo(tdb, "");
    expect(await runUserCli(["add", "alice", "--role", "viewer"], empty.io)).toBe(1);
    expect(empty.err()).toMatch(/no password on stdin/);
    const twoLines = pipedIo(tdb, `${PW}\nsecond\n`);
    expect(await runUserCli(["add", "alice", "--role", "viewer"], twoLines.io)).toBe(1);
    expect(twoLines.err()).toMatch(/one line/);
  });

  it("help goes to stdout with exit 0", async () => {
    const c = pipedIo(tdb);
    expect(await runUserCli(["--help"], c.io)).toBe(0);
    expect(c.out()).toMatch(/^usage: npm run user/);
  });

  it("runs as a real process (scripts/user.ts via node --import tsx)", async () => {
    const root = fileURLToPath(new URL("../../", import.meta.url));
    const run = promisify(execFile);
    const env = { ...process.env, ...envOf(tdb) };
    const child = run(process.execPath, ["--import", "tsx", "scripts/user.ts", "add", "eve", "--role", "viewer", "--password-stdin"], { cwd: root, env });
    child.child.stdin!.end(`${PW}\n`);
    const { stdout } = await child;
    expect(stdout).toBe("created viewer 'eve'\n");
    const failed = await run(process.execPath, ["--import", "tsx", "scripts/user.ts", "disable", "nobody"], { cwd: root, env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed).toMatchObject({ code: 1, stderr: "error: no user named 'nobody'\n" });
  });
});

describe("npm run user against a PostgreSQL it cannot reach", () => {
  it("says which database (without its password) and why, and exits 1", async () => {
    let err = "";
    const io: CliIo = {
      env: { GPUDECK_DATABASE_URL: "postgres://gpudeck:s3cret-pw@127.0.0.1:1/gpudeck" },
      stdin: Readable.from([]) as CliIo["stdin"],
      stdout: { write: () => true },
      stderr: { write: (t: string) => (err += t) },
    };
    expect(await runUserCli(["list"], io)).toBe(1);
    expect(err).toMatch(/^error: cannot reach the panel database \(database postgres:\/\/gpudeck@127\.0\.0\.1:1\/gpudeck\): .*ECONNREFUSED/);
    expect(err).not.toContain("s3cret-pw");
  });
});
