/**
 * Whether the panel's build is current: its BUILD_ID is newer than every source the build reads
 * (app/, components/, server/ without tests, and the build's config files). One rule for
 * `npm run demo` / `npm start` (scripts/run.ts), the browser benches and e2e/replicas.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

const SOURCE_DIRS = ["app", "components", "server"];
const CONFIG_FILES = ["next.config.ts", "package.json", "postcss.config.mjs", "proxy.ts"];

export function newestSourceMtime(root: string): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (/\.(tsx?|css|mjs|json)$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  for (const d of SOURCE_DIRS) if (existsSync(path.join(root, d))) walk(path.join(root, d));
  for (const f of CONFIG_FILES) if (existsSync(path.join(root, f))) newest = Math.max(newest, statSync(path.join(root, f)).mtimeMs);
  return newest;
}

/** True when `<root>/<distDir>/BUILD_ID` exists and is newer than every source. */
export function buildIsFresh(root: string, distDir = process.env.GPUDECK_DIST_DIR || ".next"): boolean {
  const buildId = path.join(root, distDir, "BUILD_ID");
  return existsSync(buildId) && statSync(buildId).mtimeMs >= newestSourceMtime(root);
}
