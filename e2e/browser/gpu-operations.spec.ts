import { expect, revealLazySections, test, type Page } from "./fixtures";

// Serving, not just running, and the cure for the incident, on the demo's gpu-a (GPUDECK_SIM_SPEED=2:
// Kimi's 119 checkpoint shards load in ~9 s, a killed process's memory drains in ~22 s: GPUDECK_SIM_DRAIN_S). Runs
// after foundation.spec.ts in each project; both leave vllm-kimi-k25.service running and serving.
test.describe.configure({ mode: "serial" });

const KIMI = "vllm-kimi-k25.service";
const KIMI_PAGE = `/hosts/gpu-a/units/${KIMI}`;
/** the polling ExecStartPre's line while the GPUs are busy (server/agent/simulator/units.ts) */
const POLLING_LINE = "GPU memory still in use, waiting";
const shot = (page: Page, name: string) => page.screenshot({ path: `test-results/screenshots/${test.info().project.name}-${name}.png`, fullPage: true });

async function openKimiServing(page: Page) {
  // a script error would leave the page showing a stale state: say so in the test's output
  page.on("pageerror", (err) => console.log(`[${test.info().project.name}] page error: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error") console.log(`[${test.info().project.name}] console error: ${msg.text()}`);
  });
  await page.goto(KIMI_PAGE);
  await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live");
  await expect(page.getByTestId("state-badge").first()).toHaveText("active (running)", { timeout: 60_000 });
  await expect(page.getByTestId("readiness").first()).toHaveAttribute("data-state", "serving", { timeout: 60_000 });
  // the engine and the journal are drawn once scrolled to
  await revealLazySections(page);
}

async function openDialog(page: Page, action: "Restart" | "Kill (SIGKILL)") {
  await page.getByRole("group", { name: "Unit actions" }).getByRole("button", { name: action, exact: true }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog).toContainText(KIMI);
  return dialog;
}

/** What the page showed in each watched element, in order, from `recordFromNow` on. */
type Shown = Record<string, { state: string | null; text: string } | null>;

/**
 * Records every change of the watched elements (`data-state` or `data-readiness`, and text) from
 * now on, in the page itself: a stage that lasts a second still shows up when a slow (phone,
 * busy machine) test looks only later. Bounded to the last 2,000 changes.
 */
async function recordFromNow(page: Page, watch: Record<string, string>): Promise<() => Promise<Shown[]>> {
  await page.evaluate((watch) => {
    const seen: Shown[] = [];
    const take = () => {
      const now: Shown = {};
      for (const [name, selector] of Object.entries(watch)) {
        const el = document.querySelector(selector);
        now[name] = el ? { state: el.getAttribute("data-state") ?? el.getAttribute("data-readiness"), text: (el.textContent ?? "").trim() } : null;
      }
      if (JSON.stringify(now) === JSON.stringify(seen.at(-1))) return;
      seen.push(now);
      if (seen.length > 2000) seen.shift();
    };
    take();
    new MutationObserver(take).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    (window as unknown as { __shown: Shown[] }).__shown = seen;
  }, watch);
  return () => page.evaluate(() => (window as unknown as { __shown: Shown[] }).__shown);
}

/** "serving › loading › serving": the states one watched element went through, repeats folded. */
function statesOf(shown: Shown[], name: string): string {
  const states = shown.map((s) => s[name]?.state ?? "none");
  return states.filter((s, i) => s !== states[i - 1]).join(" › ");
}

test("a restart shows the engine's load stages, then serving, in the unit header, the overview and the readiness lane", async ({ page, context }) => {
  // two pages and a restart: ~1 min on a phone with both cores busy
  test.setTimeout(150_000);
  await openKimiServing(page);
  const readiness = page.getByTestId("readiness").first();
  await expect(readiness).toContainText("serving /models/kimi-k2.5");
  await expect(page.getByTestId("engine-probe")).toContainText(/http:\/\/127\.0\.0\.1:8000\/.* · HTTP 200 at/);

  const overview = await context.newPage();
  await overview.goto("/?q=kimi");
  const rowSelector = `[data-testid="unit-row"][data-unit="${KIMI}"]`;
  const row = overview.locator(rowSelector);
  await expect(row.getByTestId("readiness")).toHaveText(/serving/);

  const dialog = await openDialog(page, "Restart");
  await dialog.getByLabel(/Reason/).fill("e2e: watch it load");
  // the stages pass in seconds: both pages record what they show from before the click on
  const shownOnUnit = await recordFromNow(page, {
    readiness: '[data-testid="readiness"]',
    badge: '[data-testid="state-badge"]',
    job: '[data-testid="job-progress"]',
  });
  const shownOnOverview = await recordFromNow(overview, { row: rowSelector, readiness: `${rowSelector} [data-testid="readiness"]` });
  await dialog.getByRole("button", { name: `Restart ${KIMI}` }).click();
  // the header left serving, loaded, and serves again: wait on that; the message says what it
  // showed and the job line's last words (a refusal or a confirmation question would be there)
  const sequence = async () => {
    const shown = await shownOnUnit();
    return `${statesOf(shown, "readiness")} (job: ${shown.at(-1)?.job?.text ?? "none"})`;
  };
  await expect.poll(sequence, { timeout: 60_000 }).toMatch(/^serving › .*loading › serving \(/);
  const unitShown = await shownOnUnit();
  const loading = unitShown.filter((s) => s.readiness?.state === "loading");
  // systemd says running long before the engine serves: the header says which stage it is in
  expect(
    loading.some((s) => s.badge?.text === "active (running)" && /loading weights \d+\/119 · \d/.test(s.readiness?.text ?? "")),
    JSON.stringify(loading.slice(0, 5)),
  ).toBe(true);
  await expect(readiness).toHaveAttribute("data-state", "serving");
  await expect(readiness).toContainText("serving /models/kimi-k2.5");
  expect(unitShown.map((s) => s.job?.text ?? "")).toContainEqual(expect.stringMatching(/^Job #\d+ \(restart\)/));
  // the overview's row went through the same
  await expect.poll(async () => statesOf(await shownOnOverview(), "row"), { timeout: 30_000 }).toMatch(/^serving › .*loading › serving$/);
  expect(statesOf(await shownOnOverview(), "readiness")).toMatch(/loading/);
  await expect(row.getByTestId("readiness")).toHaveText(/serving \/models\/kimi-k2\.5/);
  await overview.close();

  // on a phone the short stages share one "N readiness changes" box: its label names them
  const lane = page.getByRole("list", { name: "Readiness in view" });
  await expect(lane.getByRole("listitem", { name: /loading weights/ }).last()).toBeAttached();
  await expect(lane.getByRole("listitem", { name: /^serving from .* to now/ })).toBeAttached();
  await shot(page, "readiness-serving");
});

test("the incident cured: kill, then restart when its GPUs are free — it waits for the drain, then starts with no polling", async ({ page }) => {
  test.setTimeout(150_000);
  await openKimiServing(page);
  const journalLines = page.getByTestId("journal").getByTestId("journal-line");
  await expect(journalLines.first()).toBeAttached();

  const kill = await openDialog(page, "Kill (SIGKILL)");
  await kill.getByRole("button", { name: `Kill (SIGKILL) ${KIMI}` }).click();
  await expect(page.getByTestId("state-badge").first()).toHaveText("failed (failed)");

  // the killed workers' memory still drains: the dialog says what the GPU-aware restart would wait for
  const dialog = await openDialog(page, "Restart");
  const wait = dialog.getByTestId("gpu-wait");
  await expect(wait).toContainText("Restart when its GPUs are free");
  await expect(wait.getByRole("listitem")).toHaveCount(8);
  await expect(wait.getByRole("listitem").first()).toContainText(/^GPU 0: [\d.]+ GiB by exited \d+/);
  const pollingBefore = await journalLines.filter({ hasText: POLLING_LINE }).count();
  await dialog.getByLabel(/Reason/).fill("e2e: restart when its GPUs are free");
  await dialog.getByRole("button", { name: "Restart when its GPUs are free" }).click();
  await expect(dialog).toBeHidden();

  const op = page.getByTestId("operation");
  await expect(op).toHaveAttribute("data-step", "waiting-for-gpus", { timeout: 10_000 });
  const steps = op.getByTestId("operation-steps");
  // killed: nothing left to stop
  await expect(steps.locator('[data-step="stopping"]')).toHaveAttribute("data-status", "skipped");
  await expect(steps.locator('[data-step="waiting-for-gpus"]')).toHaveAttribute("data-status", "current");
  await expect(op.getByTestId("operation-held")).toContainText(/GiB still held on GPUs 0–7 .*gives up in/);
  await expect(op.getByRole("button", { name: /^Cancel/ })).toBeVisible();
  const firstHeld = Number(await op.getAttribute("data-held-mib"));
  expect(firstHeld).toBeGreaterThan(0);
  await shot(page, "operation-waiting");
  // the memory drains while it waits
  await expect.poll(async () => Number(await op.getAttribute("data-held-mib")), { timeout: 20_000 }).toBeLessThan(firstHeld);

  await expect(op).toHaveAttribute("data-step", /^(starting|started)$/, { timeout: 40_000 });
  await expect(op).toHaveAttribute("data-step", "started", { timeout: 40_000 });
  await expect(steps.locator('[data-step="waiting-for-gpus"]')).toHaveAttribute("data-status", "done");
  await expect(steps.locator('[data-step="starting"]')).toHaveAttribute("data-status", "done");
  await expect(op.getByTestId("operation-message")).toContainText(/^Started vllm-kimi-k25\.service/);
  await expect(op.getByRole("button", { name: /^Cancel/ })).toHaveCount(0);
  await expect(page.getByTestId("state-badge").first()).toHaveText("active (running)", { timeout: 20_000 });
  // its ExecStartPre passed at once: no polling line since the operation began
  expect(await journalLines.filter({ hasText: POLLING_LINE }).count()).toBe(pollingBefore);
  await expect(page.getByTestId("diagnosis-headline")).not.toContainText("Waiting in ExecStartPre");
  await expect(page.getByTestId("readiness").first()).toHaveAttribute("data-state", "serving", { timeout: 40_000 });
  // the timeline shows it as a span with its steps, and the engine's lane its stages
  const spans = page.getByRole("list", { name: "GPU-aware restarts in view" });
  await expect(
    spans.getByRole("listitem", { name: /^restart when its GPUs are free by \w+ from .*: waiting for its GPUs [\d.]+ s, starting .*, started$/ }).last(),
  ).toBeAttached();
  await expect(page.getByRole("list", { name: "Readiness in view" }).getByRole("listitem", { name: /^serving from .* to now/ })).toBeAttached();
  await shot(page, "operation-started");
});
