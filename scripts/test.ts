/**
 * `npm test`: typecheck, lint, unit tests, real-systemd integration tests (as root), and the
 * browser e2e suite against the built app in demo mode. Runs every step, then reports.
 * `npm test -- --skip=e2e,systemd` skips steps (for quick local runs).
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const skip = new Set(
  process.argv
    .slice(2)
    .filter((a) => a.startsWith("--skip="))
    .flatMap((a) => a.slice(7).split(",")),
);
const bin = (name: string) => path.join(root, "node_modules", ".bin", name);

const steps: { name: string; cmd: string; args: string[] }[] = [
  { name: "typecheck", cmd: bin("tsc"), args: ["--noEmit", "-p", "."] },
  { name: "lint", cmd: bin("eslint"), args: ["."] },
  { name: "unit", cmd: bin("vitest"), args: ["run"] },
  { name: "systemd", cmd: bin("vitest"), args: ["run", "--config", "vitest.e2e.config.ts"] },
  { name: "e2e", cmd: bin("playwright"), args: ["test"] },
];

function run(cmd: string, args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: "inherit", env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } });
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.on("error", () => resolve(127));
  });
}

const results: { name: string; ok: boolean; seconds: number }[] = [];
for (const step of steps) {
  if (skip.has(step.name)) continue;
  console.log(`\n=== ${step.name}: ${path.basename(step.cmd)} ${step.args.join(" ")}`);
  const t0 = Date.now();
  const code = await run(step.cmd, step.args);
  results.push({ name: step.name, ok: code === 0, seconds: Math.round((Date.now() - t0) / 1000) });
}
console.log("\n=== summary");
for (const r of results) console.log(`${r.ok ? "ok  " : "FAIL"} ${r.name} (${r.seconds} s)`);
const failed = results.filter((r) => !r.ok).length;
console.log(`steps: ${results.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
