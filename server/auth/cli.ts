/**
 * `npm run user -- <command>`: manage panel users from a shell on the panel host.
 * The logic lives here (testable with fake streams); scripts/user.ts only wires up the process.
 */
import { userInfo } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { openStore, redactDatabaseUrl, type Store } from "../store/database";
import { fixedStore } from "../store/lazyStore";
import { isDatabaseUnreachable, unreachableReason } from "../store/unavailable";
import { AuditStore } from "./audit";
import { TotpStore } from "./totp";
import { UserStore } from "./users";
import { AuthError, systemClock, type Clock, type User } from "./types";
import { isRole, type Role } from "../contract/actors";

export interface CliIo {
  env: Readonly<Record<string, string | undefined>>;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Base for a relative GPUDECK_DATA_DIR. Default process.cwd(). */
  cwd?: string;
  clock?: Clock;
}

export const USAGE = `usage: npm run user -- <command> [options]

commands:
  add <name> --role viewer|operator|admin [--units GLOB[,GLOB…]]… [--password-stdin | --no-password]
                     create a user; operators act only on units matching --units (e.g. 'vllm-team-a-*')
  passwd <name> [--password-stdin]
                     set a new password; signs the user out everywhere
  disable <name>     disable the user and sign them out everywhere
  enable <name>      enable a disabled user
  reset-2fa <name>   turn the user's two-factor sign-in off (a lost phone); they sign in with
                     their password and set it up again (at once where their role requires it)
  set <name> [--role ROLE] [--units GLOB[,GLOB…]]…
                     change role or unit patterns (--units '' clears them)
  list [--json]      list users
  setup-token [--url PANEL_URL]
                     print a one-time link to create the first admin (only while no admin exists)

Passwords are prompted without echo on a terminal and read from stdin otherwise
(one line; --password-stdin forces stdin). --no-password creates an account only usable
through the trusted reverse proxy. Database: PostgreSQL at $GPUDECK_DATABASE_URL when set
(the panel replicas' one), else <data dir>/panel.db with $GPUDECK_DATA_DIR (default ./.data).
`;

const COMMANDS = ["add", "passwd", "disable", "enable", "reset-2fa", "set", "list", "setup-token"];

class UsageError extends Error {}
class CliError extends Error {}

const MAX_STDIN_BYTES = 64 * 1024;

async function readAllStdin(stdin: CliIo["stdin"]): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of stdin as AsyncIterable<Buffer | string>) {
    const buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    size += buf.length;
    if (size > MAX_STDIN_BYTES) throw new CliError("password on stdin is too long");
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Read one line from a terminal with echo off. */
function promptHidden(io: CliIo, prompt: string): Promise<string> {
  const { stdin, stderr } = io;
  if (typeof stdin.setRawMode !== "function") throw new CliError("cannot turn off echo on this terminal; use --password-stdin");
  // Echo off before the prompt appears, so nothing typed in reply is ever echoed.
  stdin.setRawMode(true);
  stderr.write(prompt);
  return new Promise((resolvePromise, reject) => {
    let typed = "";
    const finish = (): void => {
      stdin.removeListener("data", onData);
      stdin.setRawMode!(false);
      stdin.pause();
      stderr.write("\n");
    };
    const onData = (chunk: Buffer | string): void => {
      const text = typeof chunk === "string" ? chunk : chunk.toString("utf8");
      for (const ch of text) {
        if (ch === "\r" || ch === "\n") {
          finish();
          resolvePromise(typed);
          return;
        }
        if (ch === "\u0003" || (ch === "\u0004" && typed.length === 0)) {
          finish();
          reject(new CliError("cancelled"));
          return;
        }
        if (ch === "\u007f" || ch === "\b") typed = [...typed].slice(0, -1).join("");
        else if (ch === "\u0015") typed = "";
        else if (ch === "\u001b")
          break; // escape sequence (arrow keys…): drop the rest of it
        else if (ch >= " ") typed += ch;
      }
    };
    stdin.on("data", onData);
    stdin.resume();
  });
}

async function readNewPassword(io: CliIo, username: string, fromStdin: boolean): Promise<string> {
  if (fromStdin || !io.stdin.isTTY) {
    const text = await readAllStdin(io.stdin);
    const firstLine = text.replace(/\r?\n$/, "");
    if (firstLine.includes("\n")) throw new CliError("expected one line (the password) on stdin");
    if (firstLine.length === 0) throw new CliError("no password on stdin");
    return firstLine;
  }
  const first = await promptHidden(io, `New password for ${username}: `);
  const second = await promptHidden(io, "Repeat it: ");
  if (first !== second) throw new CliError("passwords do not match");
  return first;
}

function parseUnits(values: readonly string[] | undefined): string[] | undefined {
  if (values === undefined) return undefined;
  return values
    .flatMap((v) => v.split(","))
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
}

function formatTime(ms: number | null): string {
  return ms === null ? "-" : new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function formatUsers(users: readonly User[]): string {
  const rows = [
    ["USER", "ROLE", "STATUS", "UNITS", "PASSWORD CHANGED", "CREATED"],
    ...users.map((u) => [
      u.username,
      u.role,
      u.disabled ? "disabled" : "enabled",
      u.role === "operator" ? u.unitPatterns.join(",") || "(none)" : u.role === "admin" ? "(all)" : "-",
      u.hasPassword ? formatTime(u.passwordChangedAt) : "(no password)",
      formatTime(u.createdAt),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return (
    rows
      .map((r) =>
        r
          .map((cell, i) => cell.padEnd(widths[i]!))
          .join("  ")
          .trimEnd(),
      )
      .join("\n") + "\n"
  );
}

function oneName(positionals: readonly string[], command: string): string {
  if (positionals.length !== 1) throw new UsageError(`${command} takes exactly one user name`);
  return positionals[0]!;
}

/** Run the CLI; returns the process exit code (0 ok, 1 failed, 2 usage). */
export async function runUserCli(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  function parse() {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        role: { type: "string" },
        units: { type: "string", multiple: true },
        "password-stdin": { type: "boolean" },
        "no-password": { type: "boolean" },
        json: { type: "boolean" },
        url: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  }
  try {
    parsed = parse();
  } catch (err) {
    io.stderr.write(`error: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === "help") {
    (command === undefined && !values.help ? io.stderr : io.stdout).write(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }

  if (!COMMANDS.includes(command)) {
    io.stderr.write(`error: unknown command '${command}'\n\n${USAGE}`);
    return 2;
  }
  const dataDir = resolve(io.cwd ?? process.cwd(), io.env.GPUDECK_DATA_DIR || ".data");
  const databaseUrl = io.env.GPUDECK_DATABASE_URL?.trim() || null;
  // for error messages: where the CLI looked (never a password)
  const where = databaseUrl ? `database ${redactDatabaseUrl(databaseUrl)}` : `data dir ${dataDir}`;
  const clock = io.clock ?? systemClock;
  let store: Store | null = null;
  try {
    // Validate arguments before touching the database.
    const role = values.role;
    if (role !== undefined && !isRole(role)) throw new UsageError(`--role must be viewer, operator or admin, not '${role}'`);
    const units = parseUnits(values.units);

    store = await openStore({ dataDir, databaseUrl });
    // changes publish panel events like the panel's own: running panels (every replica) see them
    const users = new UserStore(fixedStore(store), { clock });
    const audit = new AuditStore(fixedStore(store), { clock });
    const actor = `cli:${safeOsUser()}`;
    const record = async (action: string, target: string, detail: string | null = null): Promise<void> => {
      await audit.recordAudit({
        user: actor,
        role: null,
        sourceAddr: "local",
        host: null,
        unit: null,
        action,
        reason: null,
        outcome: "ok",
        detail: `user=${target}${detail ? ` ${detail}` : ""}`,
      });
    };

    switch (command) {
      case "add": {
        const name = oneName(rest, "add");
        if (role === undefined) throw new UsageError("add needs --role viewer|operator|admin");
        if (values["no-password"] && values["password-stdin"]) throw new UsageError("--no-password and --password-stdin exclude each other");
        if (units !== undefined && units.length > 0 && role !== "operator") {
          io.stderr.write(`note: unit patterns only matter for operators (${role === "admin" ? "admins act on every unit" : "viewers act on none"})\n`);
        }
        if (role === "operator" && (units === undefined || units.length === 0)) {
          io.stderr.write("note: this operator has no --units and so may act on no unit yet\n");
        }
        if (await users.getUser(name)) throw new CliError(`a user named '${name}' already exists`);
        const password = values["no-password"] ? null : await readNewPassword(io, name, values["password-stdin"] === true);
        const user = await users.createUser({ username: name, password, role: role as Role, unitPatterns: units });
        await record("user.add", user.username, `role=${user.role}${user.unitPatterns.length ? ` units=${user.unitPatterns.join(",")}` : ""}`);
        io.stdout.write(`created ${user.role} '${user.username}'${user.unitPatterns.length ? ` for units ${user.unitPatterns.join(", ")}` : ""}\n`);
        return 0;
      }
      case "passwd": {
        const name = oneName(rest, "passwd");
        const existing = await users.getUser(name);
        if (!existing) throw new CliError(`no user named '${name}'`);
        const password = await readNewPassword(io, existing.username, values["password-stdin"] === true);
        const user = await users.setPassword(existing.username, password);
        await record("user.passwd", user.username);
        io.stdout.write(`password of '${user.username}' changed; their sessions were ended\n`);
        return 0;
      }
      case "disable":
      case "enable": {
        const name = oneName(rest, command);
        const user = await users.setDisabled(name, command === "disable");
        await record(`user.${command}`, user.username);
        io.stdout.write(command === "disable" ? `disabled '${user.username}' and ended their sessions\n` : `enabled '${user.username}'\n`);
        return 0;
      }
      case "reset-2fa": {
        const name = oneName(rest, "reset-2fa");
        const user = await users.getUser(name);
        if (!user) throw new CliError(`no user named '${name}'`);
        const removed = await new TotpStore(fixedStore(store), { clock }).remove(user.id);
        await record("user.2fa.reset", user.username, removed ? "two-factor sign-in reset" : "had no two-factor sign-in");
        io.stdout.write(removed ? `two-factor sign-in of '${user.username}' reset\n` : `'${user.username}' had no two-factor sign-in\n`);
        return 0;
      }
      case "set": {
        const name = oneName(rest, "set");
        if (role === undefined && units === undefined) throw new UsageError("set needs --role and/or --units");
        const user = await users.updateUser(name, { role: role as Role | undefined, unitPatterns: units });
        await record("user.update", user.username, `role=${user.role} units=${user.unitPatterns.join(",")}`);
        io.stdout.write(`'${user.username}' is now ${user.role}${user.role === "operator" ? ` for units ${user.unitPatterns.join(", ") || "(none)"}` : ""}\n`);
        return 0;
      }
      case "list": {
        if (rest.length > 0) throw new UsageError("list takes no arguments");
        const list = await users.listUsers();
        io.stdout.write(
          values.json ? `${JSON.stringify(list, null, 2)}\n` : list.length ? formatUsers(list) : "no users yet; run `npm run user -- setup-token`\n",
        );
        return 0;
      }
      case "setup-token": {
        if (rest.length > 0) throw new UsageError("setup-token takes no arguments");
        const created = await users.ensureSetupToken();
        if (!created) throw new CliError("an enabled admin already exists; add users with `npm run user -- add`");
        await record("setup-token", "-");
        const base = values.url?.replace(/\/+$/, "");
        io.stdout.write(
          `setup token (valid until ${formatTime(created.expiresAt)}, works once; any earlier token is void):\n` +
            `${base ? `${base}/setup#token=${created.token}` : created.token}\n`,
        );
        return 0;
      }
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`error: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof AuthError || err instanceof CliError) {
      io.stderr.write(`error: ${err.message}\n`);
      return 1;
    }
    if (isDatabaseUnreachable(err)) {
      io.stderr.write(`error: cannot reach the panel database (${where}): ${unreachableReason(err)}\n`);
      return 1;
    }
    io.stderr.write(`error: ${unreachableReason(err)} (${where})\n`);
    return 1;
  } finally {
    await store?.close();
  }
}

function safeOsUser(): string {
  try {
    return userInfo().username;
  } catch {
    return String(process.getuid?.() ?? "unknown");
  }
}
