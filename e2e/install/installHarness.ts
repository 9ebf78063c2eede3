/**
 * Installs gpudeck into a systemd sandbox the way README's "Install on a GPU host" does, from the
 * tarball `npm pack` makes, with the files of deploy/ as shipped:
 *   /opt/gpudeck-<version>    the package unpacked, where `npm ci --omit=dev` installs its dependencies
 *   /opt/gpudeck              a link to it (an upgrade unpacks beside it and moves the link)
 * One difference, offline and fast: `npm ci` would download the dependencies and compile
 * better-sqlite3 (two minutes here). Instead the package's node_modules links each production
 * package of its npm-shrinkwrap.json (the ones `npm ci --omit=dev` installs, nothing of the dev
 * tree) to this checkout's node_modules, bind-mounted read-only at /opt/gpudeck-e2e/node_modules so
 * services with PrivateTmp=/ProtectHome= still see it wherever the checkout lives. Then the
 * package's postinstall (bin/buildLinks.js restore) runs, as npm would run it.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "../systemd/agentHarness";
import type { Sandbox } from "../sandbox/sandbox";

const run = promisify(execFile);

const VERSION = (JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;
export const PACKAGE_DIR = `/opt/gpudeck-${VERSION}`;
export const GPUDECK_BIN = "/opt/gpudeck/bin/gpudeck.js";
// named node_modules: Node looks for a package's own dependencies in the node_modules folders above it
const MODULES_MOUNT = "/opt/gpudeck-e2e/node_modules";

/** `npm run build` when there is no build yet (CI's first), then `npm pack`; returns the tarball's path. */
export async function packTarball(log: (msg: string) => void): Promise<string> {
  const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };
  if (!existsSync(path.join(REPO_ROOT, ".next", "BUILD_ID"))) {
    const t0 = Date.now();
    await run("npm", ["run", "--silent", "build"], { cwd: REPO_ROOT, env, maxBuffer: 64 * 1024 * 1024 });
    log(`next build: ${Date.now() - t0} ms`);
  }
  const dest = mkdtempSync(path.join(tmpdir(), "gpudeck-pack-"));
  const t0 = Date.now();
  await run("npm", ["pack", "--silent", "--pack-destination", dest], { cwd: REPO_ROOT, env, maxBuffer: 16 * 1024 * 1024 });
  const tgz = readdirSync(dest).find((f) => f.endsWith(".tgz"));
  if (!tgz) throw new Error(`npm pack wrote no tarball into ${dest}`);
  log(`npm pack: ${Date.now() - t0} ms`);
  return path.join(dest, tgz);
}

/** Top-level packages of the package's shrinkwrap (the lock file) that a production install has. */
export function productionPackages(shrinkwrap: string): string[] {
  const lock = JSON.parse(shrinkwrap) as { packages: Record<string, { dev?: boolean }> };
  return Object.entries(lock.packages)
    .filter(([key, meta]) => key.startsWith("node_modules/") && !key.slice(13).includes("node_modules/") && !meta.dev)
    .map(([key]) => key.slice(13))
    .filter((name) => existsSync(path.join(REPO_ROOT, "node_modules", name)));
}

async function must(sb: Sandbox, argv: string[], input?: string): Promise<string> {
  const r = await sb.exec(argv, { input, timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`${argv.join(" ")} exited ${r.code}: ${r.stderr || r.stdout}`);
  return r.stdout;
}

// Runs inside the sandbox: one symlink per package, names from stdin (never a shell).
const LINK_SCRIPT = `
const fs = require("fs"), path = require("path");
const { from, to, names } = JSON.parse(fs.readFileSync(0, "utf8"));
for (const name of names) {
  fs.mkdirSync(path.dirname(path.join(to, name)), { recursive: true });
  fs.symlinkSync(path.join(from, name), path.join(to, name));
}`;

export async function installPackage(sb: Sandbox, tarball: string): Promise<void> {
  await sb.writeFile("/root/gpudeck.tgz", readFileSync(tarball));
  await must(sb, ["mkdir", "-p", PACKAGE_DIR, MODULES_MOUNT]);
  await must(sb, ["tar", "-xzf", "/root/gpudeck.tgz", "-C", PACKAGE_DIR, "--strip-components=1", "--no-same-owner"]);
  await must(sb, ["ln", "-s", PACKAGE_DIR, "/opt/gpudeck"]);
  await must(sb, ["mount", "--bind", path.join(REPO_ROOT, "node_modules"), MODULES_MOUNT]);
  await must(sb, ["mount", "-o", "remount,bind,ro", MODULES_MOUNT]);
  const names = productionPackages(await sb.readFile(`${PACKAGE_DIR}/npm-shrinkwrap.json`));
  await must(sb, ["node", "-e", LINK_SCRIPT], JSON.stringify({ from: MODULES_MOUNT, to: `${PACKAGE_DIR}/node_modules`, names }));
  await must(sb, ["node", `${PACKAGE_DIR}/bin/buildLinks.js`, "restore"]);
}

/** A file of deploy/ as shipped. */
export function deployFile(rel: string): string {
  return readFileSync(path.join(REPO_ROOT, "deploy", rel), "utf8");
}
