import { expect, test, type Page } from "@playwright/test";

const shot = (page: Page, name: string) => page.screenshot({ path: `test-results/screenshots/${test.info().project.name}-${name}.png`, fullPage: true });

test("overview lists the units, failed first, with ActiveState and SubState", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByTestId("demo-banner")).toBeVisible();
  await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live");
  const rows = page.getByTestId("unit-row");
  await expect(rows).toHaveCount(4);
  await expect(rows.first()).toHaveAttribute("data-unit", /vllm-(llama-70b|qwen-draft)\.service/);
  const kimi = page.locator('[data-unit="vllm-kimi-k25.service"]');
  await expect(kimi.getByTestId("state-badge")).toHaveText(/active \(running\)/);
  await expect(page.locator('[data-unit="vllm-llama-70b.service"]').getByTestId("state-badge")).toHaveText(/failed \(failed\)/);
  await shot(page, "overview");
});

test("restart the big unit: activating (start-pre) then active (running), live, surviving a reload", async ({ page }) => {
  await page.goto("/units/vllm-kimi-k25.service");
  const badge = page.getByTestId("state-badge").first();
  await expect(badge).toHaveText(/active \(running\)/);
  await page.getByRole("button", { name: "Restart", exact: true }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog).toContainText("vllm-kimi-k25.service");
  await dialog.getByLabel(/Reason/).fill("e2e: restart after config change");
  await dialog.getByRole("button", { name: /Restart vllm-kimi-k25.service/ }).click();
  await expect(page.getByTestId("job-progress")).toContainText(/Job #\d+ \(restart\)/);
  await expect(badge).toHaveText(/activating \(start-pre\)/, { timeout: 20_000 });
  await shot(page, "start-pre");
  // reload mid-way: the page comes back live and still shows the same state
  await page.reload();
  await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live");
  await expect(page.getByTestId("state-badge").first()).toHaveText(/activating \(start-pre\)/);
  await expect(page.getByTestId("state-badge").first()).toHaveText(/active \(running\)/, { timeout: 30_000 });
  await expect(page.getByTestId("transition-list")).toContainText("activating (start-pre)");
  await shot(page, "running");
});
