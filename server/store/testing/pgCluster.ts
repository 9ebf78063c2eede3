/**
 * Test-only: a throw-away PostgreSQL cluster from Debian's `postgresql` package, in a temp dir,
 * on a free port, with fsync off; stopped and removed after. `initdb` refuses root, so it runs as
 * the `postgres` user. In CI (CI=true) a missing PostgreSQL is an error, not a skip: the
 * replica tests must run there (.ci/run installs the package).
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export interface PgCluster {
  url: string;
  /** stop it for good and remove its files */
  stop(): void;
  /** stop the server (fast shutdown: connections are cut), keeping its files: "the database went away" */
  pause(): void;
  /** start it again on the same port after pause() */
  resume(): void;
}

function binDir(): string | null {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(root, versions[0]!, "bin") : null;
}

/** Why no cluster can be started here, or null when one can. */
export function pgUnavailable(): string | null {
  if (!binDir()) return "PostgreSQL is not installed (apt-get install postgresql)";
  if (process.getuid?.() !== 0) return "starting a test cluster needs root (initdb runs as the postgres user)";
  return null;
}

/** Skip (loudly) when PostgreSQL cannot run here; in CI, fail instead. */
export function skipWithoutPg(what: string): boolean {
  const why = pgUnavailable();
  if (!why) return false;
  if (process.env.CI) throw new Error(`${what}: ${why}; CI must run the PostgreSQL tests`);
  console.warn(`\n*** SKIPPING ${what}: ${why} ***\n`);
  return true;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === "object" && addr ? addr.port : 0));
    });
  });
}

export async function startPgCluster(): Promise<PgCluster> {
  const bin = binDir();
  if (!bin) throw new Error("PostgreSQL is not installed");
  const dir = mkdtempSync(path.join(tmpdir(), "gpudeck-pg-"));
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  chownSync(dir, uid, gid);
  chmodSync(dir, 0o700);
  const asPostgres = (cmd: string, args: string[]) => execFileSync("runuser", ["-u", "postgres", "--", path.join(bin, cmd), ...args], { stdio: "pipe" });
  const data = path.join(dir, "data");
  asPostgres("initdb", ["-A", "trust", "--no-sync", "-U", "postgres", "-D", data]);
  const port = await freePort();
  const start = () =>
    asPostgres("pg_ctl", [
      "-D",
      data,
      "-w",
      "-l",
      path.join(dir, "log"),
      "-o",
      `-h 127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c full_page_writes=off`,
      "start",
    ]);
  start();
  let stopped = false;
  let paused = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    try {
      if (!paused) asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  process.once("exit", stop);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop,
    pause: () => {
      asPostgres("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
      paused = true;
    },
    resume: () => {
      start();
      paused = false;
    },
  };
}
