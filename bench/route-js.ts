/**
 * What the browser downloads per route: compressed JavaScript on the wire (as served), counted
 * (a) until the route's main content shows (the unit page: its state timeline drawn; the GPU chart
 * below it comes when scrolled to) and (b) at network idle, in a 1366 × 900 view. The baseline, measured in the same
 * run, is the 404 page: Next + React + the root layout (providers, live stream, header), with none
 * of the routes' own code. Budget: 200 KB per route at network idle.
 *
 *   node --import tsx bench/route-js.ts [--smoke]   (starts `npm run demo` on a free port, builds if needed)
 *   BENCH_URL=http://127.0.0.1:3000 node --import tsx bench/route-js.ts   (an already running demo)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "@playwright/test";
import { runMain, smoke } from "./lib/args";
import { launchChromium } from "./lib/browser";
import { printHeader } from "./lib/machine";
import { freePort, startDemo, type Proc } from "./lib/processes";
import { printTable, Targets } from "./lib/table";

const BUDGET_KB = 200;
const UNIT_TIMELINE = '[data-testid="unit-history"] [role="list"][aria-label="States in view"] > [role="listitem"]';
const ROUTES: { route: string; main: string }[] = [
  { route: "/", main: '[data-testid="host-card"]' },
  { route: "/hosts/gpu-a", main: '[data-testid="unit-row"]' },
  { route: "/hosts/gpu-a/units/vllm-kimi-k25.service", main: UNIT_TIMELINE },
  { route: "/hosts/gpu-a/gpus", main: '[data-testid="gpu-card"]' },
];
const BASELINE = { route: "/this-route-does-not-exist", main: "main, body" };

interface Measured {
  mainKb: number;
  idleKb: number;
  files: number;
}

async function measure(browser: Browser, base: string, r: { route: string; main: string }): Promise<Measured> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  const js = new Set<string>();
  let bytes = 0;
  let mainBytes: number | null = null;
  cdp.on("Network.responseReceived", (e) => {
    if (e.type === "Script") js.add(e.requestId);
  });
  cdp.on("Network.loadingFinished", (e) => {
    if (js.has(e.requestId)) bytes += e.encodedDataLength;
  });
  await page.goto(base + r.route, { waitUntil: "commit" });
  await page.waitForSelector(r.main, { timeout: 60_000 });
  mainBytes = bytes;
  await page.waitForLoadState("networkidle");
  await context.close();
  return { mainKb: mainBytes / 1024, idleKb: bytes / 1024, files: js.size };
}

async function main() {
  printHeader("Route JavaScript: compressed bytes each route downloads (headless chromium)", smoke);
  let demo: Proc | null = null;
  let dataDir: string | null = null;
  let base = process.env.BENCH_URL;
  if (!base) {
    dataDir = mkdtempSync(path.join(tmpdir(), "gpudeck-bench-routes-"));
    const started = await startDemo(dataDir, 3, await freePort());
    demo = started.proc;
    base = started.url;
  }
  const browser = await launchChromium();
  try {
    const baseline = await measure(browser, base, BASELINE);
    const targets = new Targets();
    const rows = [["404 page (baseline: Next, React, root layout)", baseline.mainKb, baseline.idleKb, "–", baseline.files]];
    for (const r of smoke ? ROUTES.slice(2, 3) : ROUTES) {
      const m = await measure(browser, base, r);
      rows.push([r.route, m.mainKb, m.idleKb, `+${(m.idleKb - baseline.idleKb).toFixed(1)}`, m.files]);
      targets.check(`${r.route}: ≤ ${BUDGET_KB} KB of JS at network idle`, m.idleKb <= BUDGET_KB, `${m.idleKb.toFixed(1)} KB`);
    }
    printTable(["route", "KB until main content shows", "KB at network idle", "over baseline", "JS files"], rows);
    console.log("KB = compressed bytes on the wire (CDP encodedDataLength of Script responses); a fresh browser context per route (nothing cached)\n");
    targets.print();
  } finally {
    await browser.close();
    await demo?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

runMain(main);
