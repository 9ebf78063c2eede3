/**
 * `npm run bench`: every bench, one after the other (each in its own process, so one's load does
 * not linger into the next); `npm run bench -- fanout draw` only those; other arguments
 * (`--smoke`, `--seconds=…`) go to each. Prints each bench's output and, at the end, which ran,
 * how long each took and the targets each missed. Exit 1 when a bench failed to run (a missed
 * target is a result, not a failure).
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

/** name → script, in the order `npm run bench` runs them (the quick ones first). */
const BENCHES: Record<string, string> = {
  history: "history-store.ts",
  "history-reply": "history-reply.ts",
  chart: "chart-stack.ts",
  alerts: "alerts.ts",
  readiness: "readiness-lines.ts",
  routes: "route-js.ts",
  draw: "unit-draw.ts",
  transitions: "transition-latency.ts",
  actions: "action-ack.ts",
  agent: "agent-overhead.ts",
  fanout: "fanout.ts",
  ingest: "ingest.ts",
  delivery: "delivery.ts",
  replicas: "replicas.ts",
};

function runOne(script: string, args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(here, script), ...args], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (d: string) => {
      out += d;
      process.stdout.write(d);
    });
    child.on("exit", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), out }));
  });
}

async function main() {
  const argv = process.argv.slice(2);
  const names = argv.filter((a) => !a.startsWith("-"));
  const args = argv.filter((a) => a.startsWith("-"));
  const unknown = names.filter((n) => !(n in BENCHES));
  if (unknown.length > 0) {
    console.error(`unknown bench ${unknown.join(", ")}; one of: ${Object.keys(BENCHES).join(", ")}`);
    process.exit(2);
  }
  const chosen = names.length > 0 ? names : Object.keys(BENCHES);
  const summary: string[] = [];
  let failed = 0;
  for (const name of chosen) {
    const t0 = Date.now();
    console.log(`\n=== bench ${name} (bench/${BENCHES[name]} ${args.join(" ")})\n`);
    const { code, out } = await runOne(BENCHES[name]!, args);
    const seconds = Math.round((Date.now() - t0) / 1000);
    const missed = out.split("\n").filter((l) => l.startsWith("- MISSED"));
    const skipped = out.split("\n").some((l) => l.startsWith("SKIPPED"));
    if (code !== 0) failed++;
    summary.push(`${code !== 0 ? "FAIL" : skipped ? "skip" : "ok  "} ${name} (${seconds} s)${missed.length ? `: ${missed.length} target(s) missed` : ""}`);
    for (const m of missed) summary.push(`       ${m.slice(2)}`);
  }
  console.log("\n=== bench summary");
  for (const l of summary) console.log(l);
  process.exit(failed > 0 ? 1 : 0);
}

void main();
