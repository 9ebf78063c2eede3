import { execFile } from "node:child_process";
import { PassThrough, Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runUserCli, type CliIo } from "./cli";
import { openPanelDb } from "./db";
import { AuditStore } from "./audit";
import { SessionStore } from "./sessions";
import { UserStore } from "./users";
import { tempDataDir } from "./testHelpers";

const PW = "correct horse battery staple";

interface Captured {
  io: CliIo;
  out(): string;
  err(): string;
}

function pipedIo(dataDir: string, stdinText = ""): Captured {
  let out = "";
  let err = "";
  const stdin = Readable.from([Buffer.from(stdinText)]) as CliIo["stdin"];
  return {
    io: {
      env: { GPUDECK_DATA_DIR: dataDir },
      stdin,
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: (t: string) => (err += t) },
    },
    out: () => out,
    err: () => err,
  };
}

/** A fake terminal: isTTY, setRawMode, and keystrokes typed after each prompt appears. */
function ttyIo(dataDir: string, answers: string[]): Captured & { rawModes: boolean[] } {
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
      env: { GPUDECK_DATA_DIR: dataDir },
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

describe("npm run user", () => {
  let tmp: ReturnType<typeof tempDataDir>;
  beforeEach(() => {
    tmp = tempDataDir();
  });
  afterEach(() => {
    tmp.cleanup();
  });

  function withStores<T>(fn: (users: UserStore, audit: AuditStore, sessions: SessionStore) => T): T {
    const db = openPanelDb(tmp.dir);
    let result: T;
    try {
      result = fn(new UserStore(db), new AuditStore(db), new SessionStore(db));
    } catch (err) {
      db.close();
      throw err;
    }
    if (result instanceof Promise) return result.finally(() => db.close()) as T;
    db.close();
    return result;
  }

  it("adds an operator with unit patterns, password from stdin", async () => {
    const c = pipedIo(tmp.dir, `${PW}\n`);
    expect(await runUserCli(["add", "alice", "--role", "operator", "--units", "vllm-team-a-*,tgi-a-*", "--units", "x-*"], c.io)).toBe(0);
    expect(c.out()).toBe("created operator 'alice' for units vllm-team-a-*, tgi-a-*, x-*\n");
    await withStores(async (users, audit) => {
      expect(users.getUser("alice")).toMatchObject({ role: "operator", unitPatterns: ["vllm-team-a-*", "tgi-a-*", "x-*"] });
      expect((await users.verifyCredentials("alice", PW)).ok).toBe(true);
      expect(audit.queryAudit({ action: "user.add" })[0]).toMatchObject({ outcome: "ok", detail: expect.stringMatching(/^user=alice role=operator/) });
    });
  });

  it("--password-stdin keeps spaces and strips only the final newline", async () => {
    const c = pipedIo(tmp.dir, `  ${PW}  \r\n`);
    expect(await runUserCli(["add", "bob", "--role", "viewer", "--password-stdin"], c.io)).toBe(0);
    await withStores(async (users) => expect((await users.verifyCredentials("bob", `  ${PW}  `)).ok).toBe(true));
  });

  it("prompts twice without echo on a terminal", async () => {
    const c = ttyIo(tmp.dir, [`${PW}x\u007f\r`, `${PW}\r`]);
    expect(await runUserCli(["add", "carol", "--role", "admin"], c.io)).toBe(0);
    // echo goes off before each prompt appears and back on after the answer
    expect(c.err()).toBe("<raw:true>New password for carol: <raw:false>\n<raw:true>Repeat it: <raw:false>\n");
    expect(c.err()).not.toContain(PW);
    expect(c.out()).not.toContain(PW);
    expect(c.rawModes).toEqual([true, false, true, false]);
    await withStores(async (users) => expect((await users.verifyCredentials("carol", PW)).ok).toBe(true));
  });

  it("refuses mismatched prompted passwords", async () => {
    const c = ttyIo(tmp.dir, [`${PW}\r`, `${PW}!\r`]);
    expect(await runUserCli(["add", "carol", "--role", "admin"], c.io)).toBe(1);
    expect(c.err()).toMatch(/passwords do not match/);
    withStores((users) => expect(users.getUser("carol")).toBeNull());
  });

  it("Ctrl-C at the prompt cancels", async () => {
    const c = ttyIo(tmp.dir, ["abc\u0003"]);
    expect(await runUserCli(["passwd", "nobody"], c.io)).toBe(1);
    expect(c.err()).toMatch(/no user named 'nobody'/);
    await runUserCli(["add", "dave", "--role", "viewer", "--no-password"], pipedIo(tmp.dir).io);
    const c2 = ttyIo(tmp.dir, ["abc\u0003"]);
    expect(await runUserCli(["passwd", "dave"], c2.io)).toBe(1);
    expect(c2.err()).toMatch(/cancelled/);
    expect(c2.rawModes.at(-1)).toBe(false);
  });

  it("passwd changes the password and ends the user's sessions", async () => {
    await runUserCli(["add", "alice", "--role", "viewer"], pipedIo(tmp.dir, PW).io);
    const id = withStores((users, _a, sessions) => sessions.createSession(users.getUser("alice")!.id).id);
    const c = pipedIo(tmp.dir, "a whole new passphrase\n");
    expect(await runUserCli(["passwd", "alice"], c.io)).toBe(0);
    expect(c.out()).toMatch(/sessions were ended/);
    await withStores(async (users, _a, sessions) => {
      expect(sessions.validateSession(id).ok).toBe(false);
      expect((await users.verifyCredentials("alice", "a whole new passphrase")).ok).toBe(true);
    });
  });

  it("disable / enable", async () => {
    await runUserCli(["add", "root", "--role", "admin"], pipedIo(tmp.dir, PW).io);
    await runUserCli(["add", "alice", "--role", "viewer"], pipedIo(tmp.dir, PW).io);
    const id = withStores((users, _a, sessions) => sessions.createSession(users.getUser("alice")!.id).id);
    expect(await runUserCli(["disable", "alice"], pipedIo(tmp.dir).io)).toBe(0);
    withStores((users, _a, sessions) => {
      expect(users.getUser("alice")!.disabled).toBe(true);
      expect(sessions.validateSession(id).ok).toBe(false);
    });
    expect(await runUserCli(["enable", "alice"], pipedIo(tmp.dir).io)).toBe(0);
    withStores((users) => expect(users.getUser("alice")!.disabled).toBe(false));
    const last = pipedIo(tmp.dir);
    expect(await runUserCli(["disable", "root"], last.io)).toBe(1);
    expect(last.err()).toBe("error: refusing to disable the last enabled admin\n");
  });

  it("set changes role and units", async () => {
    await runUserCli(["add", "alice", "--role", "viewer"], pipedIo(tmp.dir, PW).io);
    const c = pipedIo(tmp.dir);
    expect(await runUserCli(["set", "alice", "--role", "operator", "--units", "vllm-*"], c.io)).toBe(0);
    expect(c.out()).toBe("'alice' is now operator for units vllm-*\n");
    expect(await runUserCli(["set", "alice", "--units", ""], pipedIo(tmp.dir).io)).toBe(0);
    withStores((users) => expect(users.getUser("alice")).toMatchObject({ role: "operator", unitPatterns: [] }));
  });

  it("list prints a table, or JSON without hashes", async () => {
    const empty = pipedIo(tmp.dir);
    expect(await runUserCli(["list"], empty.io)).toBe(0);
    expect(empty.out()).toMatch(/no users yet/);
    await runUserCli(["add", "alice", "--role", "operator", "--units", "vllm-*"], pipedIo(tmp.dir, PW).io);
    await runUserCli(["add", "proxyuser", "--role", "viewer", "--no-password"], pipedIo(tmp.dir).io);
    const table = pipedIo(tmp.dir);
    expect(await runUserCli(["list"], table.io)).toBe(0);
    const lines = table.out().trimEnd().split("\n");
    expect(lines[0]).toMatch(/^USER\s+ROLE\s+STATUS\s+UNITS\s+PASSWORD CHANGED\s+CREATED$/);
    expect(lines[1]).toMatch(/^alice\s+operator\s+enabled\s+vllm-\*\s+\d{4}-/);
    expect(lines[2]).toMatch(/^proxyuser\s+viewer\s+enabled\s+-\s+\(no password\)/);
    const json = pipedIo(tmp.dir);
    expect(await runUserCli(["list", "--json"], json.io)).toBe(0);
    const parsed = JSON.parse(json.out()) as { username: string }[];
    expect(parsed.map((u) => u.username)).toEqual(["alice", "proxyuser"]);
    expect(json.out()).not.toMatch(/argon2|password_hash/);
  });

  it("setup-token prints a one-time link only while there is no admin", async () => {
    const c = pipedIo(tmp.dir);
    expect(await runUserCli(["setup-token", "--url", "https://panel.example/"], c.io)).toBe(0);
    const token = /setup#token=([A-Za-z0-9_-]{43})\n$/.exec(c.out())?.[1];
    expect(token).toBeDefined();
    await withStores(async (users) => {
      await users.completeSetup(token!, "root", PW);
    });
    const again = pipedIo(tmp.dir);
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
      const c = pipedIo(tmp.dir, `${PW}\n`);
      expect(await runUserCli(argv, c.io), argv.join(" ")).toBe(code);
      expect(c.err(), argv.join(" ")).toMatch(message);
    }
    const weak = pipedIo(tmp.dir, "short\n");
    expect(await runUserCli(["add", "alice", "--role", "viewer"], weak.io)).toBe(1);
    expect(weak.err()).toBe("error: password must be at least 12 characters\n");
    const empty = pipedIo(tmp.dir, "");
    expect(await runUserCli(["add", "alice", "--role", "viewer"], empty.io)).toBe(1);
    expect(empty.err()).toMatch(/no password on stdin/);
    const twoLines = pipedIo(tmp.dir, `${PW}\nsecond\n`);
    expect(await runUserCli(["add", "alice", "--role", "viewer"], twoLines.io)).toBe(1);
    expect(twoLines.err()).toMatch(/one line/);
  });

  it("help goes to stdout with exit 0", async () => {
    const c = pipedIo(tmp.dir);
    expect(await runUserCli(["--help"], c.io)).toBe(0);
    expect(c.out()).toMatch(/^usage: npm run user/);
  });

  it("runs as a real process (scripts/user.ts via node --import tsx)", async () => {
    const root = fileURLToPath(new URL("../../", import.meta.url));
    const run = promisify(execFile);
    const env = { ...process.env, GPUDECK_DATA_DIR: tmp.dir };
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
