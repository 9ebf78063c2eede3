/**
 * The built panel the browser benches serve: built (next build) when missing or older than the
 * sources, by the same rule as `npm run demo` (scripts/run.ts), into GPUDECK_DIST_DIR or .next.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./processes";

function newestSourceMtime(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (/\.(tsx?|css|mjs|json)$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  for (const d of ["app", "components", "server"]) if (existsSync(path.join(ROOT, d))) walk(path.join(ROOT, d));
  for (const f of ["next.config.ts", "package.json", "postcss.config.mjs"]) {
    if (existsSync(path.join(ROOT, f))) newest = Math.max(newest, statSync(path.join(ROOT, f)).mtimeMs);
  }
  return newest;
}

export async function ensureBuild(): Promise<void> {
  const buildId = path.join(ROOT, process.env.GPUDECK_DIST_DIR || ".next", "BUILD_ID");
  if (existsSync(buildId) && statSync(buildId).mtimeMs >= newestSourceMtime()) return;
  console.log("building the panel (next build)…");
  const code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, "node_modules/next/dist/bin/next"), "build"], {
      cwd: ROOT,
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
      stdio: ["ignore", "ignore", "inherit"],
    });
    child.on("exit", (c) => resolve(c ?? 1));
  });
  if (code !== 0) throw new Error("next build failed");
}
