/**
 * The panel build's links to its server-side packages. Turbopack links each external package
 * (better-sqlite3, @trpc/server, …) into .next/node_modules as `<name>-<hash>` → node_modules/<name>,
 * and the built server code loads them by those names. npm pack leaves symlinks out, so packing
 * records them (`record`, the prepack script) and installing recreates them (`restore`, the
 * postinstall script; `gpudeck panel` also restores missing ones before it starts).
 *
 *   node bin/buildLinks.js record | restore
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const MANIFEST = path.join(".next", "gpudeck-links.json");
const LINKS_DIR = path.join(".next", "node_modules");
const NAME_RE = /^(@[a-z0-9._-]+\/)?[a-z0-9._-]+$/i;

/** Symlinks under .next/node_modules, as { link, pkg }: link relative to root, pkg the package it points at. */
function findLinks(root) {
  const out = [];
  const walk = (rel) => {
    const dir = path.join(root, rel);
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir)) {
      const relPath = path.join(rel, entry);
      const stat = lstatSync(path.join(root, relPath));
      if (stat.isSymbolicLink()) {
        const target = readlinkSync(path.join(root, relPath));
        const m = /node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(target);
        if (m) out.push({ link: relPath, pkg: m[1] });
      } else if (stat.isDirectory() && entry.startsWith("@")) {
        walk(relPath); // scoped names: .next/node_modules/@trpc/server-<hash>
      }
    }
  };
  walk(LINKS_DIR);
  return out;
}

function newestSourceMtime(root) {
  let newest = 0;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (/\.(tsx?|css)$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  for (const d of ["app", "components"]) if (existsSync(path.join(root, d))) walk(path.join(root, d));
  return newest;
}

/** Write the manifest; throws when there is no build to pack. */
export function recordBuildLinks(root) {
  const buildId = path.join(root, ".next", "BUILD_ID");
  if (!existsSync(buildId)) throw new Error("there is no panel build to pack (.next/BUILD_ID is missing): run `npm run build` first");
  if (statSync(buildId).mtimeMs < newestSourceMtime(root)) {
    process.stderr.write("[gpudeck] warning: the panel build is older than app/ or components/; run `npm run build` before packing a release\n");
  }
  const links = findLinks(root);
  writeFileSync(path.join(root, MANIFEST), `${JSON.stringify(links, null, 2)}\n`);
  return links;
}

/** The package directory Node would find `pkg` in from `root` (walking up node_modules folders). */
function packageDir(root, pkg) {
  for (let dir = root; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", pkg);
    if (existsSync(path.join(candidate, "package.json"))) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}

/** Recreate missing links from the manifest; returns { created, missing } (packages not found). */
export function restoreBuildLinks(root) {
  const manifest = path.join(root, MANIFEST);
  if (!existsSync(manifest)) return { created: 0, missing: [] };
  const links = JSON.parse(readFileSync(manifest, "utf8"));
  let created = 0;
  const missing = [];
  for (const { link, pkg } of links) {
    // the manifest comes with the package, but never write outside .next/node_modules
    const normal = path.normalize(link);
    if (!normal.startsWith(LINKS_DIR + path.sep) || normal.includes("..") || !NAME_RE.test(pkg)) throw new Error(`bad entry in ${MANIFEST}: ${link} → ${pkg}`);
    const at = path.join(root, normal);
    if (existsSync(at)) continue;
    const dir = packageDir(root, pkg);
    if (!dir) {
      missing.push(pkg);
      continue;
    }
    mkdirSync(path.dirname(at), { recursive: true });
    symlinkSync(path.relative(path.dirname(at), dir), at);
    created++;
  }
  return { created, missing };
}

/** Links the manifest names that do not exist. */
export function missingBuildLinks(root) {
  const manifest = path.join(root, MANIFEST);
  if (!existsSync(manifest)) return [];
  return JSON.parse(readFileSync(manifest, "utf8"))
    .map((l) => l.link)
    .filter((link) => !existsSync(path.join(root, link)));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const command = process.argv[2];
  try {
    if (command === "record") {
      const links = recordBuildLinks(root);
      process.stdout.write(`[gpudeck] recorded ${links.length} build link${links.length === 1 ? "" : "s"} in ${MANIFEST}\n`);
    } else if (command === "restore") {
      const { created, missing } = restoreBuildLinks(root);
      if (created) process.stdout.write(`[gpudeck] restored ${created} build link${created === 1 ? "" : "s"} in ${LINKS_DIR}\n`);
      if (missing.length) throw new Error(`the panel build needs ${missing.join(", ")}, which is not installed`);
    } else {
      throw new Error("usage: node bin/buildLinks.js record|restore");
    }
  } catch (err) {
    process.stderr.write(`[gpudeck] ${err.message}\n`);
    process.exit(1);
  }
}
