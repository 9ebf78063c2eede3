import { expect, test } from "@playwright/test";

// The unit page while a GPU-aware restart runs (issue 23 part 7), on the demo's gpu-a: after a
// kill, the restart dialog's primary button is the GPU-aware restart (the killed run's memory is
// still held); while it waits, the diagnosis card speaks of the operation and offers no second
// restart; while the engine then loads, the card's progress is the header's. Leaves Kimi serving.
test.describe.configure({ mode: "serial" });

const KIMI = "vllm-kimi-k25.service";

test("during a GPU-aware restart the card speaks of the operation, offers no second restart, and follows the live progress", async ({ page }) => {
  test.setTimeout(150_000);
  await page.goto(`/hosts/gpu-a/units/${KIMI}`);
  await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live");
  await expect(page.getByTestId("readiness").first()).toHaveAttribute("data-state", "serving", { timeout: 60_000 });
  const actions = page.getByRole("group", { name: "Unit actions" });

  await actions.getByRole("button", { name: "Kill (SIGKILL)", exact: true }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("button", { name: `Kill (SIGKILL) ${KIMI}` }).click();
  await expect(page.getByTestId("state-badge").first()).toHaveText("failed (failed)");

  // the killed run's memory is still held: the GPU-aware restart is primary (Enter confirms it)
  await actions.getByRole("button", { name: "Restart", exact: true }).click();
  await expect(dialog.getByTestId("exited-memory-note")).toBeVisible();
  const primary = dialog.locator('button[type="submit"]');
  await expect(primary).toHaveText("Restart when its GPUs are free");
  await dialog.getByLabel(/Reason/).fill("e2e: the page during an operation");
  await dialog.getByLabel(/Reason/).press("Enter"); // Enter confirms the primary button
  await expect(dialog).toBeHidden();

  const op = page.getByTestId("operation");
  await expect(op).toHaveAttribute("data-step", "waiting-for-gpus", { timeout: 10_000 });
  const card = page.getByTestId("diagnosis");
  await expect(card).toHaveAttribute("data-code", "operation-running");
  await expect(card.getByTestId("diagnosis-headline")).toContainText(/^Restart when its GPUs are free, asked by .+ ago: waiting for its GPUs since /);
  await expect(card).not.toContainText("then restart it");
  await expect(card.getByRole("button")).toHaveCount(0);
  await expect(card.getByRole("link")).toHaveCount(0);

  // once it starts the unit and the engine loads, the card's progress is the header's
  await expect(op).toHaveAttribute("data-step", /^(starting|started)$/, { timeout: 60_000 });
  const header = page.getByTestId("readiness").first();
  await expect(header).toHaveAttribute("data-state", "loading", { timeout: 30_000 });
  // both read in one tick of the page (the same DOM), a few times while it loads
  let compared = 0;
  for (let i = 0; i < 10 && compared < 3; i++) {
    const seen = await page.evaluate(() => {
      const h = document.querySelector('[data-testid="readiness"]');
      const d = document.querySelector('[data-testid="diagnosis"]');
      const c = d?.querySelector('[data-testid="diagnosis-headline"]');
      return { state: h?.getAttribute("data-state") ?? null, code: d?.getAttribute("data-code"), header: h?.textContent ?? "", card: c?.textContent ?? "" };
    });
    const progress = /\d+\/\d+/.exec(seen.header)?.[0];
    // the card speaks of loading once the agent's diagnosis says so (or still of the operation while it starts the unit)
    if (seen.state === "loading" && progress && (seen.code === "engine-loading" || seen.code === "operation-running")) {
      expect(seen.card, `header "${seen.header}" vs card "${seen.card}"`).toContain(progress);
      compared++;
    }
    await page.waitForTimeout(300);
  }
  expect(compared, "the engine was seen loading with progress").toBeGreaterThan(0);
  await expect(header).toHaveAttribute("data-state", "serving", { timeout: 60_000 });
});
