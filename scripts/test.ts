/**
 * `npm test`: typecheck, lint, unit tests, real-systemd integration tests (as root), and the
 * browser e2e suite against the built app in demo mode. First checks (and as root on Debian,
 * installs) what the steps need (scripts/testDeps.ts); runs every step, then reports each one's
 * time and result; a step that cannot run here is skipped with its reason, and the browser step
 * runs without its real-systemd project where the sandbox cannot boot (not root), saying so. `npm test -- --skip=e2e,systemd` skips steps (for quick local runs);
 * `npm test -- --deps-only` only checks and installs what the tests need (.ci/run).
 */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { formatDuration } from "../server/contract/format";
import { ensureDeps, machineProbes, runApt, type StepName } from "./testDeps";
import { lastLines, unhandledErrorsOf } from "./testReport";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const skip = new Set(args.filter((a) => a.startsWith("--skip=")).flatMap((a) => a.slice(7).split(",")));
const depsOnly = args.includes("--deps-only");
const unknown = args.filter((a) => !a.startsWith("--skip=") && a !== "--deps-only");
if (unknown.length > 0) {
  console.error(`npm test: unknown argument ${unknown.join(" ")}; it takes --skip=step,step and --deps-only`);
  process.exit(2);
}
const bin = (name: string) => path.join(root, "node_modules", ".bin", name);

// Each test step also writes a JSON report; the summary at the end names every failed test with
// the first lines of its error, so the last screenful of a CI log says what broke.
// not under test-results/: Playwright empties its outputDir when it starts, which took the unit
// and systemd steps' reports with it, so a failure there was never named in the digest
const reports = path.join(root, "test-reports");
const report = (step: string) => path.join(reports, `${step}.json`);
const vitestJson = (step: string) => ["--reporter=default", "--reporter=json", `--outputFile.json=${report(step)}`];

const steps: { name: StepName; cmd: string; args: string[]; env?: Record<string, string> }[] = [
  { name: "typecheck", cmd: bin("tsc"), args: ["--noEmit", "-p", "."] },
  // eslint, then the formatter's check (prettier --check): `npm run lint`
  { name: "lint", cmd: "npm", args: ["run", "--silent", "lint"] },
  { name: "unit", cmd: bin("vitest"), args: ["run", ...vitestJson("unit")] },
  { name: "systemd", cmd: bin("vitest"), args: ["run", "--config", "vitest.e2e.config.ts", ...vitestJson("systemd")] },
  { name: "e2e", cmd: bin("playwright"), args: ["test", "--reporter=list,json"], env: { PLAYWRIGHT_JSON_OUTPUT_FILE: report("e2e") } },
  // single sign-on in a browser: its own provider and panel on the build the step above used
  { name: "e2e-oidc", cmd: bin("playwright"), args: ["test", "-c", "e2e/browser/oidc.config.ts", "--reporter=list"] },
];

// What each step printed last (bounded): a vitest run can fail with no failed test, on an error
// outside every test (an unhandled rejection after a test ended), and the digest then quotes it.
const TAIL_BYTES = 256 * 1024;
const printed = new Map<StepName, string>();

function run(step: StepName, cmd: string, args: string[], env: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ["inherit", "pipe", "pipe"], env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", ...env } });
    let tail = "";
    const keep = (chunk: Buffer) => {
      tail = (tail + chunk.toString("utf8")).slice(-TAIL_BYTES);
    };
    child.stdout.on("data", (c: Buffer) => (process.stdout.write(c), keep(c)));
    child.stderr.on("data", (c: Buffer) => (process.stderr.write(c), keep(c)));
    child.on("close", (code, signal) => {
      printed.set(step, tail);
      resolve(code ?? (signal ? 1 : 0));
    });
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
  type Spec = {
    title: string;
    file: string;
    line: number;
    tests: { projectName: string; expectedStatus?: string; results: { status: string; error?: { message?: string } }[] }[];
  };
  const walk = (suite: Suite) => {
    for (const spec of suite.specs ?? [])
      for (const t of spec.tests)
        // a test that is meant to fail (test.fail: the page-error guard's own tests) and did is no failure
        if (t.expectedStatus !== "failed")
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

const t0 = Date.now();
const wanted = steps.filter((s) => !skip.has(s.name)).map((s) => s.name);
const deps = ensureDeps(wanted, machineProbes(), runApt, (line) => console.log(line));
if (!deps.ok) {
  console.error(`\n${deps.message}`);
  process.exit(1);
}
if (depsOnly) {
  for (const [name, why] of deps.skipped) console.log(`the ${name} step will be skipped here: ${why}`);
  for (const [name, p] of deps.partial) console.log(`the ${name} step will run without its ${p.without} project here: ${p.why}`);
  console.log(`test dependencies: all there${deps.installed.length ? ` (installed ${deps.installed.join(", ")})` : ""}`);
  process.exit(0);
}

rmSync(reports, { recursive: true, force: true });
mkdirSync(reports, { recursive: true });
/** Playwright's projects but `without`, as --project arguments: the step runs the rest. */
async function projectsBut(without: string): Promise<string[]> {
  const config = (await import("../playwright.config")).default;
  const names = (config.projects ?? []).map((p) => p.name ?? "");
  if (!names.includes(without)) throw new Error(`playwright.config.ts has no project ${without} (scripts/testDeps.ts SANDBOX_PARTS)`);
  return names.filter((n) => n && n !== without).map((n) => `--project=${n}`);
}

type Result = { name: StepName; status: "passed" | "failed" | "skipped"; ms: number; why?: string; without?: string };
const results: Result[] = [];
for (const step of steps) {
  if (skip.has(step.name)) {
    results.push({ name: step.name, status: "skipped", ms: 0, why: "left out with --skip" });
    continue;
  }
  const why = deps.skipped.get(step.name);
  if (why) {
    console.log(`\n=== ${step.name}: skipped: ${why}`);
    results.push({ name: step.name, status: "skipped", ms: 0, why });
    continue;
  }
  const part = deps.partial.get(step.name);
  const args = part ? [...step.args, ...(await projectsBut(part.without))] : step.args;
  if (part) console.log(`\n=== ${step.name}: without its ${part.without} project: ${part.why}`);
  console.log(`\n=== ${step.name}: ${path.basename(step.cmd)} ${args.join(" ")}`);
  const t = Date.now();
  const code = await run(step.name, step.cmd, args, step.env);
  const without = part ? `without its ${part.without} project: ${part.why}` : undefined;
  results.push({ name: step.name, status: code === 0 ? "passed" : "failed", ms: Date.now() - t, ...(without ? { without } : {}) });
}
const failures = results
  .filter((r) => r.status === "failed")
  .flatMap((r) => {
    const named = failuresOf(r.name).map((f) => `${r.name}: ${f.trimStart()}`);
    const unhandled = unhandledErrorsOf(printed.get(r.name) ?? "");
    if (unhandled) named.push(`${r.name}: errors outside any test (the run fails on them)\n${unhandled}`);
    if (named.length === 0) named.push(`${r.name}: it exited non-zero and named no failed test; its last lines:\n${lastLines(printed.get(r.name) ?? "")}`);
    return named;
  });
if (failures.length > 0) {
  console.log("\n=== failures");
  for (const f of failures) console.log(f);
}
console.log("\n=== summary");
const MARK = { passed: "ok  ", failed: "FAIL", skipped: "skip" } as const;
for (const r of results)
  console.log(`${MARK[r.status]} ${r.name}${r.status === "skipped" ? `: ${r.why}` : ` (${formatDuration(r.ms)})${r.without ? `, ${r.without}` : ""}`}`);
const count = (status: Result["status"]) => results.filter((r) => r.status === status).length;
const inPart = results.filter((r) => r.without).length;
console.log(`steps: ${count("passed")} passed, ${count("failed")} failed, ${count("skipped")} skipped${inPart ? `, ${inPart} run in part` : ""}`);
console.log(`total: ${formatDuration(Date.now() - t0)}`);
process.exit(count("failed") === 0 ? 0 : 1);
