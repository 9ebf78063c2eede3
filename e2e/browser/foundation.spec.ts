import { expect, test, type Page } from "@playwright/test";

// Tests run in order against one simulated host (the demo, at GPUDECK_SIM_SPEED=2).
test.describe.configure({ mode: "serial" });

const KIMI = "vllm-kimi-k25.service";
const shot = (page: Page, name: string) => page.screenshot({ path: `test-results/screenshots/${test.info().project.name}-${name}.png`, fullPage: true });

async function waitLive(page: Page) {
  await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live");
}

/** Open the unit page and confirm an action in the dialog, with a reason. */
async function confirmAction(page: Page, action: "Restart" | "Stop" | "Kill (SIGKILL)", reason: string) {
  await page.getByRole("group", { name: "Unit actions" }).getByRole("button", { name: action, exact: true }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog).toContainText(KIMI);
  await dialog.getByLabel(/Reason/).fill(reason);
  await dialog.getByRole("button", { name: `${action} ${KIMI}` }).click();
  await expect(dialog).toBeHidden();
}

test("overview: units failed first, ActiveState and SubState as text, GPU strip", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByTestId("demo-banner")).toBeVisible();
  await waitLive(page);
  const rows = page.getByTestId("unit-row");
  await expect(rows).toHaveCount(4);
  await expect(rows.first().getByTestId("state-badge")).toHaveText(/failed \(failed\)|activating \(auto-restart\)/);
  await expect(page.locator(`[data-unit="${KIMI}"]`).getByTestId("state-badge")).toHaveText(/active \(running\)/);
  await expect(page.locator('[data-unit="vllm-llama-70b.service"]').getByTestId("state-badge")).toHaveText("failed (failed)");
  // the failing unit carries its reason on the overview
  await expect(page.locator('[data-unit="vllm-llama-70b.service"]').getByTestId("diagnosis-reason")).toContainText(/ExecStartPre/);
  // the order: failed → changing → active → inactive
  const states = await rows.getByTestId("state-badge").evaluateAll((els) => els.map((e) => e.getAttribute("data-state")!.split("/")[0]));
  const rank = (s: string) => ["failed", "activating", "active", "inactive"].indexOf(s === "deactivating" ? "activating" : s);
  expect(states.map(rank)).toEqual([...states.map(rank)].sort((a, b) => a - b));
  await expect(page.getByRole("heading", { name: "GPU memory" })).toBeVisible();
  await shot(page, "overview");
});

test("filter by text and state is kept in the URL and survives a reload", async ({ page }) => {
  await page.goto("/");
  await waitLive(page);
  await page.getByLabel("Filter units by name").fill("kimi");
  await expect(page).toHaveURL(/q=kimi/);
  await expect(page.getByTestId("unit-row")).toHaveCount(1);
  await page.getByLabel("Filter units by state").selectOption("active");
  await expect(page).toHaveURL(/state=active/);
  await page.reload();
  await waitLive(page);
  await expect(page.getByLabel("Filter units by name")).toHaveValue("kimi");
  await expect(page.getByTestId("unit-row")).toHaveCount(1);
  await expect(page.getByTestId("unit-row")).toHaveAttribute("data-unit", KIMI);
});

test("the incident: kill, restart, wait in start-pre for draining memory, then running", async ({ page, context }) => {
  await page.goto(`/units/${KIMI}`);
  await waitLive(page);
  const badge = page.getByTestId("state-badge").first();
  await expect(badge).toHaveText("active (running)", { timeout: 40_000 });
  await expect(page.getByTestId("diagnosis")).toHaveAttribute("data-code", "healthy");

  await confirmAction(page, "Kill (SIGKILL)", "e2e: reproduce the incident");
  await expect(badge).toHaveText("failed (failed)");
  await confirmAction(page, "Restart", "e2e: restart after kill");
  await expect(page.getByTestId("job-progress")).toContainText(/Job #\d+ \(restart\)/);
  await expect(badge).toHaveText("activating (start-pre)", { timeout: 5_000 });
  // within 2 s the card says why: GPU memory held by an exited process, with the amount
  await expect(page.getByTestId("diagnosis-headline")).toContainText(/Waiting in ExecStartPre for [\d.]+ GiB of GPU memory still held by .*exited process/, {
    timeout: 2_000,
  });
  await expect(page.getByTestId("diagnosis")).toHaveAttribute("data-code", "waiting-gpu-exited");
  await expect(
    page
      .getByRole("list", { name: "States in view" })
      .getByRole("listitem", { name: /activating \(start-pre\)/ })
      .first(),
  ).toBeAttached();
  await shot(page, "start-pre");

  // meanwhile the overview's GPU strip and the GPUs page show that memory as held by an exited process
  const other = await context.newPage();
  await other.goto("/gpus");
  await expect(other.locator('[data-testid="gpu-process"][data-kind="exited"]').first()).toContainText("exited, still holding");
  await other.goto("/");
  await expect(other.getByText(/held by exited process/i).first()).toBeVisible();
  await shot(other, "overview-while-draining");
  await other.close();

  // reload mid-way: the page resumes live with the same picture
  await page.reload();
  await waitLive(page);
  await expect(badge).toHaveText(/activating \(start-pre\)|active \(running\)/);
  await expect(badge).toHaveText("active (running)", { timeout: 40_000 });
  await expect(page.getByTestId("diagnosis")).toHaveAttribute("data-code", "healthy", { timeout: 5_000 });
  const states = page.getByRole("list", { name: "States in view" });
  await expect(states.getByRole("listitem", { name: /activating \(start-pre\)/ }).first()).toBeAttached();
  await expect(states.getByRole("listitem", { name: /active \(running\)/ }).first()).toBeAttached();
  // the reason is on the action marker
  await expect(
    page
      .getByRole("list", { name: "Actions in view" })
      .getByRole("listitem", { name: /e2e: restart after kill/ })
      .last(),
  ).toBeAttached();
  await shot(page, "running-after-restart");
});

test("journal lines appear live", async ({ page }) => {
  await page.goto("/units/vllm-embed-small.service");
  await waitLive(page);
  const badge = page.getByTestId("state-badge").first();
  await expect(badge).toHaveText("active (running)");
  const journal = page.getByTestId("journal");
  await expect(journal).toContainText("Started vLLM: bge-small embeddings.");
  // Count, don't just look for the text: the other project already stopped and started this
  // unit on the same simulated host, so its earlier lines are in the backlog.
  const lines = journal.getByTestId("journal-line");
  const stopping = lines.filter({ hasText: "Stopping vLLM: bge-small embeddings..." });
  const stopped = lines.filter({ hasText: "Stopped vLLM: bge-small embeddings." });
  const [stoppingBefore, stoppedBefore] = [await stopping.count(), await stopped.count()];
  await page.getByRole("group", { name: "Unit actions" }).getByRole("button", { name: "Stop", exact: true }).click();
  await page
    .getByRole("dialog")
    .getByRole("button", { name: /Stop vllm-embed-small.service/ })
    .click();
  await expect(stopping).toHaveCount(stoppingBefore + 1);
  await expect(stopped).toHaveCount(stoppedBefore + 1);
  await expect(badge).toHaveText("inactive (dead)");
  await page.getByRole("group", { name: "Unit actions" }).getByRole("button", { name: "Start", exact: true }).click();
  await expect(badge).toHaveText("active (running)");
});

test("every page fits the screen: no sideways scrolling", async ({ page }) => {
  for (const route of ["/", `/units/${KIMI}`, "/gpus"]) {
    await page.goto(route);
    await waitLive(page);
    await page.waitForTimeout(500); // charts measure their width after the first paint
    const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
    expect(scrollWidth, `${route} is ${scrollWidth}px wide in a ${page.viewportSize()!.width}px viewport`).toBeLessThanOrEqual(page.viewportSize()!.width);
    expect(innerWidth).toBe(page.viewportSize()!.width);
  }
});
