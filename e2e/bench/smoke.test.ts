/**
 * Keeps the benchmarks from rotting: each bench script (bench/, `npm run bench`) runs once with
 * `--smoke` (tiny sizes, seconds) and must finish and print its results. Numbers are not checked:
 * benchmarks report wall-clock numbers, tests never assert them. Here (the e2e config) because
 * three of them need root and the real-systemd sandbox (they say SKIPPED elsewhere) and the
 * browser ones need the built panel and chromium (the first to need it builds it, as
 * `npm run demo` would; the Playwright step then finds it built).
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function runBench(name: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "bench/run.ts"), name, "--smoke"], {
      cwd: ROOT,
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.on("exit", (code) => resolve({ code, out }));
  });
}

/** bench name (bench/run.ts) → what its output must show besides the machine line */
const BENCHES: [string, RegExp][] = [
  ["history", /\| restore at agent start/],
  ["chart", /stackMemory sum, 1200 px/],
  ["alerts", /rules over \d+ hosts/],
  ["readiness", /tracker \(records \+ patterns\)/],
  ["routes", /\| \/hosts\/gpu-a\/units\/vllm-kimi-k25\.service/],
  ["draw", /\| 24 h of history \(gpu-day\)/],
  ["transitions", /\| panel SSE client|SKIPPED/],
  ["actions", /\| gpudeck: panel API units\.restart|SKIPPED/],
  ["agent", /\| gpudeck agent|SKIPPED/],
  ["fanout", /\| gpudeck +\| 2 +\| 10 /],
  ["ingest", /\| 3 +\| [\d.]+ s +\| [\d.]+ %/],
  ["delivery", /\| gpudeck +\| 2 +\| 10 /],
  ["replicas", /\| 2 +\| 20 |SKIPPED/],
];

describe("bench scripts run (--smoke)", () => {
  for (const [name, shows] of BENCHES) {
    it(name, { timeout: 600_000 }, async () => {
      const { code, out } = await runBench(name);
      expect(code, out.slice(-3000)).toBe(0);
      expect(out).toMatch(/^machine: .+ cores, .+ commit /m);
      expect(out, out.slice(-3000)).toMatch(shows);
    });
  }
});
