/**
 * What the browser downloads per route: JavaScript bytes on the wire (compressed, as served).
 * "initial" is what arrives before the page's load event (what the route needs to show and
 * hydrate); "total" adds what loads lazily afterwards (uPlot for the charts). The baseline,
 * measured in the same run, is the 404 page: Next + React + the root layout (providers, live
 * stream, header), with none of the routes' own code. Budget: 200 KB initial per route.
 *
 *   node --import tsx bench/route-js.ts          (starts the demo on port 3300, builds if needed)
 *   BENCH_URL=http://127.0.0.1:3000 node --import tsx bench/route-js.ts   (an already running panel)
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chromium } from "@playwright/test";

const BUDGET_KB = 200;
const routes = ["/", "/units/vllm-kimi-k25.service", "/gpus"];
const baselineRoute = "/this-route-does-not-exist";

async function waitFor(url: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${url} did not come up within ${timeoutMs / 1000} s`);
}

async function main() {
  let server: ChildProcess | null = null;
  let base = process.env.BENCH_URL;
  if (!base) {
    base = "http://127.0.0.1:3300";
    server = spawn(process.execPath, ["--import", "tsx", "scripts/run.ts", "demo"], {
      env: { ...process.env, PORT: "3300", GPUDECK_DATA_DIR: ".data/bench" },
      stdio: "ignore",
    });
    await waitFor(`${base}/`, 240_000);
  }
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const measure = async (route: string) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send("Network.enable");
    const js = new Map<string, string>();
    let bytes = 0;
    let initialBytes = 0;
    let loaded = false;
    cdp.on("Network.responseReceived", (e) => {
      if (e.type === "Script") js.set(e.requestId, e.response.url);
    });
    cdp.on("Network.loadingFinished", (e) => {
      if (!js.has(e.requestId)) return;
      bytes += e.encodedDataLength;
      if (!loaded) initialBytes += e.encodedDataLength;
    });
    page.once("load", () => (loaded = true));
    await page.goto(base + route, { waitUntil: "networkidle" });
    await context.close();
    return { kb: initialBytes / 1024, totalKb: bytes / 1024, files: js.size };
  };
  const baseline = await measure(baselineRoute);
  console.log(`baseline (404 page: Next, React, root layout): ${baseline.kb.toFixed(1)} KB initial JS in ${baseline.files} files`);
  let over = 0;
  for (const route of routes) {
    const m = await measure(route);
    const ok = m.kb <= BUDGET_KB;
    if (!ok) over++;
    console.log(
      `${ok ? "ok  " : "OVER"} ${route.padEnd(32)} initial ${m.kb.toFixed(1).padStart(6)} KB (+${(m.kb - baseline.kb).toFixed(1)} over baseline), total ${m.totalKb.toFixed(1)} KB in ${m.files} files; budget ${BUDGET_KB} KB initial`,
    );
  }
  await browser.close();
  server?.kill("SIGTERM");
  process.exitCode = over > 0 ? 1 : 0;
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(2);
});
