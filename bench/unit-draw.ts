/**
 * Time to draw the unit page with a day of history: the state timeline and the GPU memory chart
 * of a unit on a simulated 8-GPU host whose agent has run for 24 h (its history store filled
 * before it starts, bench/lib/dayHistory.ts: a restart every 15 min, 1 Hz samples for the last
 * hour and one per 10 s before, as the agent keeps them), in headless chromium against the built
 * panel (server/panel/serve.ts, demo mode). Baseline in the same run: the same page of the same
 * unit on an identical host whose agent has just started (minutes of history). Measured from
 * navigation: until the history queries have arrived, the live stream is up, the timeline and
 * the chart show data and the main thread is idle (requestIdleCallback); the main thread's long
 * tasks meanwhile; then the switch to the 24 h view (which fetches the day, bucketed) until idle again.
 *
 *   node --import tsx bench/unit-draw.ts [--smoke] [--runs=5]
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "@playwright/test";
import { startAgent, type RunningAgent } from "../server/agent/main";
import { numberArg, runMain, smoke } from "./lib/args";
import { launchChromium } from "./lib/browser";
import { ensureBuild } from "./lib/build";
import { writeDayHistory } from "./lib/dayHistory";
import { printHeader } from "./lib/machine";
import { freePort, Proc } from "./lib/processes";
import { median, ms, sleep } from "./lib/stats";
import { printTable } from "./lib/table";

const RUNS = numberArg("runs", 5, 1);
const UNIT = "vllm-deepseek-v3.service";

/** Installed before the page's own scripts: counts the history fetches and collects long tasks. */
function instrument() {
  const w = window as unknown as {
    __bench: { pending: number; started: number; done: Set<string>; bytes: number; long: { start: number; dur: number }[] };
    fetch: typeof fetch;
  };
  w.__bench = { pending: 0, started: 0, done: new Set(), bytes: 0, long: [] };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) w.__bench.long.push({ start: e.startTime, dur: e.duration });
  }).observe({ type: "longtask", buffered: true });
  const orig = w.fetch.bind(w);
  w.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const names = ["gpus.history", "units.timeline"].filter((n) => url.includes(n));
    if (names.length === 0) return orig(input, init);
    w.__bench.pending++;
    w.__bench.started++;
    return orig(input, init).then(
      (res) => {
        void res
          .clone()
          .arrayBuffer()
          .then((b) => {
            w.__bench.bytes += b.byteLength;
            for (const n of names) w.__bench.done.add(n);
          })
          .catch(() => undefined)
          .finally(() => w.__bench.pending--);
        return res;
      },
      (err: unknown) => {
        w.__bench.pending--;
        throw err;
      },
    );
  };
}

const ITEMS = '[data-testid="unit-history"] [role="list"][aria-label="States in view"] > [role="listitem"]';
const CHART = '[data-testid="unit-history"] [role="img"][aria-label^="GPU memory,"]';
const PLOT = '[data-testid="unit-history"] [aria-label^="State timeline"]';
/** How long the page is open before "24 h" is chosen (someone reading the last 15 minutes first). */
const READ_MS = 3_000;

/** In the page: until the history is in and drawn and the main thread is idle. */
async function waitDrawn({ items, chart }: { items: string; chart: string }) {
  const b = (window as unknown as { __bench: { pending: number; done: Set<string>; bytes: number; long: { start: number; dur: number }[] } }).__bench;
  const ready = () =>
    document.querySelector('[data-testid="connection"]')?.getAttribute("data-state") === "live" &&
    document.querySelector(chart) !== null &&
    document.querySelectorAll(items).length > 0 &&
    // the GPU memory comes with units.timeline (bucketed); older panels fetched gpus.history too
    b.done.has("units.timeline") &&
    b.pending === 0;
  for (;;) {
    await new Promise((r) => requestAnimationFrame(r));
    if (!ready()) continue;
    const t = await new Promise<number>((r) => requestIdleCallback(() => r(performance.now())));
    if (!ready()) continue;
    const before = b.long.filter((l) => l.start < t);
    const fetched = (performance.getEntriesByType("resource") as PerformanceResourceTiming[]).filter((e) => /gpus\.history|units\.timeline/.test(e.name));
    return {
      ms: t,
      historyBytes: b.bytes,
      encodedBytes: fetched.reduce((a, e) => a + e.encodedBodySize, 0),
      fetches: fetched.length,
      blockingMs: before.reduce((a, l) => a + Math.max(0, l.dur - 50), 0),
      longestMs: Math.max(0, ...before.map((l) => l.dur)),
    };
  }
}

/**
 * In the page: click "24 h" and wait until idle again: the timeline's label has moved to the day
 * (on the click's render), then until the day's history has arrived if it was fetched (a page that
 * had it in its cache, prefetched, fetches nothing), then the next idle callback.
 */
async function switchTo24h({ items, plot }: { items: string; plot: string }) {
  const b = (window as unknown as { __bench: { pending: number; started: number; long: { start: number; dur: number }[] } }).__bench;
  const label = () => document.querySelector(plot)?.getAttribute("aria-label") ?? "";
  const before = label();
  const button = [...document.querySelectorAll<HTMLButtonElement>('[aria-label="Time range"] button')].find((x) => x.textContent?.trim() === "24 h");
  if (!button) throw new Error("no 24 h button");
  const t0 = performance.now();
  button.click();
  const deadline = t0 + 30_000;
  do await new Promise((r) => requestAnimationFrame(r));
  while (label() === before && performance.now() < deadline);
  await new Promise((r) => requestAnimationFrame(r));
  while (b.pending > 0 && performance.now() < deadline) await new Promise((r) => requestAnimationFrame(r));
  const t1 = await new Promise<number>((r) => requestIdleCallback(() => r(performance.now())));
  const during = b.long.filter((l) => l.start >= t0 && l.start < t1);
  return { ms: t1 - t0, longestMs: Math.max(0, ...during.map((l) => l.dur)), items: document.querySelectorAll(items).length };
}

interface Draw {
  ms: number;
  historyBytes: number;
  encodedBytes: number;
  fetches: number;
  blockingMs: number;
  longestMs: number;
  switchMs: number;
  switchLongestMs: number;
  items24h: number;
}

async function drawOnce(browser: Browser, url: string): Promise<Draw> {
  // tall enough that the GPU chart, below the timeline and drawn when scrolled to, is in view
  const context = await browser.newContext({ viewport: { width: 1366, height: 1400 } });
  // tsx (esbuild) wraps named functions in __name(): give the page a no-op one for the functions passed in
  await context.addInitScript({ content: "globalThis.__name = (f) => f;" });
  await context.addInitScript(instrument);
  const page = await context.newPage();
  try {
    await page.goto(url, { waitUntil: "commit" });
    const drawn = await page.evaluate(waitDrawn, { items: ITEMS, chart: CHART });
    await sleep(READ_MS);
    const sw = await page.evaluate(switchTo24h, { items: ITEMS, plot: PLOT });
    return { ...drawn, switchMs: sw.ms, switchLongestMs: sw.longestMs, items24h: sw.items };
  } finally {
    await context.close();
  }
}

async function simAgent(name: string, dataDir: string, simHistory: boolean): Promise<RunningAgent> {
  return startAgent({
    host: "127.0.0.1",
    port: 0,
    token: randomBytes(32).toString("base64url"),
    unitGlobs: ["vllm-*.service"],
    nvidiaSmiPath: "nvidia-smi",
    dataDir,
    simulate: true,
    simHistory,
    gpuIntervalMs: 1000,
    simProfile: "healthy",
    simHostname: name,
  });
}

async function main() {
  printHeader(`Unit page: time to draw the timeline and GPU chart with 24 h of history (8 GPUs), headless chromium`, smoke);
  await ensureBuild();
  const tmp = mkdtempSync(path.join(tmpdir(), "gpudeck-bench-draw-"));
  const agents: RunningAgent[] = [];
  let panel: Proc | null = null;
  let browser: Browser | null = null;
  try {
    const fresh = await simAgent("gpu-fresh", path.join(tmp, "fresh"), false);
    agents.push(fresh);
    for (let i = 0; i < 100 && !fresh.hub.gpuNow()?.gpus.some((g) => g.holders.some((h) => h.unit === UNIT)); i++) await sleep(100);
    const template = fresh.hub.gpuNow();
    if (!template) throw new Error("the simulated host gave no GPU sample");
    const written = writeDayHistory(path.join(tmp, "day"), UNIT, template, Date.now());
    const day = await simAgent("gpu-day", path.join(tmp, "day"), true);
    agents.push(day);
    const agentsFile = path.join(tmp, "agents.json");
    writeFileSync(
      agentsFile,
      JSON.stringify([
        { name: "gpu-fresh", url: fresh.url, token: fresh.token },
        { name: "gpu-day", url: day.url, token: day.token },
      ]),
    );
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const key of Object.keys(env)) if (key.startsWith("GPUDECK_") && key !== "GPUDECK_DIST_DIR") delete env[key];
    const port = await freePort();
    panel = (
      await Proc.node(
        "panel",
        ["server/panel/serve.ts"],
        { ...env, GPUDECK_DEMO: "1", GPUDECK_AGENTS_FILE: agentsFile, GPUDECK_DATA_DIR: path.join(tmp, "panel"), HOSTNAME: "127.0.0.1", PORT: String(port) },
        /^\[panel\] ready on/,
        120_000,
      )
    ).proc;
    browser = await launchChromium();
    const url = (host: string) => `http://127.0.0.1:${port}/hosts/${host}/units/${UNIT}`;
    if (!smoke) await drawOnce(browser, url("gpu-fresh")); // warm-up: the server's first render of the route
    const results: Record<string, Draw[]> = { "gpu-fresh": [], "gpu-day": [] };
    for (let i = 0; i < RUNS; i++) for (const host of ["gpu-fresh", "gpu-day"]) results[host]!.push(await drawOnce(browser, url(host)));
    console.log(
      `gpu-day's store: ${written.samples} GPU samples, ${written.transitions} transitions of ${UNIT}, a restart every 15 min; ${RUNS} runs each, medians\n`,
    );
    const med = (host: string, pick: (d: Draw) => number) => median(results[host]!.map(pick));
    printTable(
      [
        "page",
        "history fetches",
        "history on the wire (decoded / compressed)",
        "drawn and idle",
        "main thread blocked (long tasks − 50 ms)",
        "longest task",
        "switch to 24 h: idle after",
        "its longest task",
        "24 h: items on the timeline",
      ],
      [
        ["baseline: agent just started (gpu-fresh)", "gpu-fresh"],
        ["24 h of history (gpu-day)", "gpu-day"],
      ].map(([label, host]) => [
        label!,
        med(host!, (d) => d.fetches),
        `${((med(host!, (d) => d.historyBytes) ?? 0) / 1024).toFixed(0)} / ${((med(host!, (d) => d.encodedBytes) ?? 0) / 1024).toFixed(0)} KB`,
        ms(med(host!, (d) => d.ms)),
        ms(med(host!, (d) => d.blockingMs)),
        ms(med(host!, (d) => d.longestMs)),
        ms(med(host!, (d) => d.switchMs)),
        ms(med(host!, (d) => d.switchLongestMs)),
        med(host!, (d) => d.items24h),
      ]),
    );
    console.log(
      "drawn and idle: navigation start → the first idle callback after the history (units.timeline, with its GPU buckets) arrived (every fetch of them: the page fetches them again on the live stream's first snapshot), the live stream is up, the timeline has segments and the chart has data\n",
    );
  } finally {
    await browser?.close();
    await panel?.stop();
    for (const a of agents) await a.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

runMain(main);
