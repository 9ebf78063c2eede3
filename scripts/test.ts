/**
 * `npm test`: typecheck, lint, unit tests, real-systemd integration tests (as root), and the
 * browser e2e suite against the built app in demo mode. Runs every step, then reports.
 * `npm test -- --skip=e2e,systemd` skips steps (for quick local runs).
 */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
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

// Each test step also writes a JSON report; the summary at the end names every failed test with
// the first lines of its error, so the last screenful of a CI log says what broke.
const reports = path.join(root, "test-results", "reports");
const report = (step: string) => path.join(reports, `${step}.json`);
const vitestJson = (step: string) => ["--reporter=default", "--reporter=json", `--outputFile.json=${report(step)}`];

const steps: { name: string; cmd: string; args: string[]; env?: Record<string, string> }[] = [
  { name: "typecheck", cmd: bin("tsc"), args: ["--noEmit", "-p", "."] },
  // eslint, then the formatter's check (prettier --check): `npm run lint`
  { name: "lint", cmd: "npm", args: ["run", "--silent", "lint"] },
  { name: "unit", cmd: bin("vitest"), args: ["run", ...vitestJson("unit")] },
  { name: "systemd", cmd: bin("vitest"), args: ["run", "--config", "vitest.e2e.config.ts", ...vitestJson("systemd")] },
  { name: "e2e", cmd: bin("playwright"), args: ["test", "--reporter=list,json"], env: { PLAYWRIGHT_JSON_OUTPUT_FILE: report("e2e") } },
  // single sign-on in a browser: its own provider and panel on the build the step above used
  { name: "e2e-oidc", cmd: bin("playwright"), args: ["test", "-c", "e2e/browser/oidc.config.ts", "--reporter=list"] },
];

function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: "inherit", env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", ...env } });
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.on("error", () => resolve(127));
  });
}

/** "file › test: first lines of the error" for each failed test in a step's JSON report. */
function failuresOf(step: string): string[] {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(report(step), "utf8"));
  } catch {
    return [];
  }
  const firstLines = (text: string) =>
    text
      .replace(/\u001b\[[0-9;]*m/g, "")
      .split("\n")
      .filter((l) => l.trim())
      .slice(0, 6)
      .map((l) => `       ${l}`)
      .join("\n");
  const out: string[] = [];
  type VitestReport = {
    testResults?: { name: string; message?: string; assertionResults?: { status: string; fullName: string; failureMessages?: string[] }[] }[];
  };
  for (const file of (json as VitestReport).testResults ?? []) {
    const rel = path.relative(root, file.name);
    const failed = (file.assertionResults ?? []).filter((a) => a.status === "failed");
    for (const a of failed) out.push(`  ${rel} › ${a.fullName}\n${firstLines(a.failureMessages?.[0] ?? "")}`);
    if (failed.length === 0 && file.message) out.push(`  ${rel}\n${firstLines(file.message)}`);
  }
  type Suite = { title: string; file?: string; specs?: Spec[]; suites?: Suite[] };
  type Spec = { title: string; file: string; line: number; tests: { projectName: string; results: { status: string; error?: { message?: string } }[] }[] };
  const walk = (suite: Suite) => {
    for (const spec of suite.specs ?? [])
      for (const t of spec.tests)
        for (const [attempt, r] of t.results.entries())
          if (r.status === "failed" || r.status === "timedOut")
            out.push(
              `  [${t.projectName}] ${spec.file}:${spec.line} › ${spec.title} (attempt ${attempt + 1}, ${r.status})\n${firstLines(r.error?.message ?? "")}`,
            );
    for (const s of suite.suites ?? []) walk(s);
  };
  for (const s of (json as { suites?: Suite[] }).suites ?? []) walk(s);
  return out;
}

rmSync(reports, { recursive: true, force: true });
mkdirSync(reports, { recursive: true });
const results: { name: string; ok: boolean; seconds: number }[] = [];
for (const step of steps) {
  if (skip.has(step.name)) continue;
  console.log(`\n=== ${step.name}: ${path.basename(step.cmd)} ${step.args.join(" ")}`);
  const t0 = Date.now();
  const code = await run(step.cmd, step.args, step.env);
  results.push({ name: step.name, ok: code === 0, seconds: Math.round((Date.now() - t0) / 1000) });
}
const failures = results.filter((r) => !r.ok).flatMap((r) => failuresOf(r.name).map((f) => `${r.name}: ${f.trimStart()}`));
if (failures.length > 0) {
  console.log("\n=== failures");
  for (const f of failures) console.log(f);
}
console.log("\n=== summary");
for (const r of results) console.log(`${r.ok ? "ok  " : "FAIL"} ${r.name} (${r.seconds} s)`);
const failed = results.filter((r) => !r.ok).length;
console.log(`steps: ${results.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
