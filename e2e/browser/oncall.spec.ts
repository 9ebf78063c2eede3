import { expect, test } from "./fixtures";

// Against the demo (everyone is the demo admin): gpu-a's vllm-llama-70b.service fails from the
// start, so it has an open alert to acknowledge. The maintenance window planned here lies in the
// future and is ended at once: no other spec's alerts or status page change.
const FAILED = "vllm-llama-70b.service";

test.beforeEach(() => test.skip(test.info().project.name !== "desktop", "one run is enough: the acknowledgement stays in the demo's database"));

test("acknowledge an open alert with a note: who and the note show on the Alerts page", async ({ page }) => {
  await page.goto("/alerts");
  const alert = page.getByTestId("alerts-open").locator(`[data-testid="alert"][data-unit="${FAILED}"][data-rule="unit-failed"]`);
  await expect(alert).toBeVisible({ timeout: 30_000 });
  await alert.getByRole("button", { name: "Acknowledge" }).click();
  await alert.getByLabel("Note (optional)").fill("checking the weights path");
  await alert.getByRole("button", { name: "I'm on it" }).click();
  await expect(alert.getByTestId("acknowledged")).toHaveText(/Acknowledged by demo .*: checking the weights path$/);
  await expect(alert.getByRole("button", { name: "Acknowledge" })).toHaveCount(0);
});

test("plan a maintenance window: listed under Next; ended, under Past", async ({ page }) => {
  await page.goto("/alerts");
  const form = page.getByRole("form", { name: "Plan maintenance" });
  await form.getByLabel("Name").fill("e2e rack move");
  await form.getByLabel("Units").fill("gpu-b:*");
  const local = (ms: number) => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  await form.getByLabel("Starts").fill(local(Date.now() + 7 * 86_400_000));
  await form.getByLabel("Ends").fill(local(Date.now() + 7 * 86_400_000 + 3_600_000));
  await form.getByRole("button", { name: "Plan maintenance" }).click();
  const next = page.getByTestId("maintenance-next").getByTestId("maintenance-window").filter({ hasText: "e2e rack move" });
  await expect(next).toBeVisible();
  await expect(next).toContainText("gpu-b:*");
  await next.getByRole("button", { name: "End now" }).click();
  await expect(page.getByTestId("maintenance-past").getByTestId("maintenance-window").filter({ hasText: "e2e rack move" })).toContainText("ended");
});
