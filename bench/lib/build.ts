/**
 * The built panel the browser benches serve: built (next build) when missing or older than the
 * sources, by the same rule as `npm run demo` (scripts/run.ts), into GPUDECK_DIST_DIR or .next.
 */
import { spawn } from "node:child_process";
import { buildIsFresh } from "../../scripts/buildFreshness";
import path from "node:path";
import { ROOT } from "./processes";

export async function ensureBuild(): Promise<void> {
  if (buildIsFresh(ROOT)) return;
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
