import { expect, test, type Page } from "./fixtures";

// Against the demo's simulated fleet: gpu-a's vllm-llama-70b.service fails in ExecStartPre from
// the start, so it has an open alert. The demo has no login (everyone is the demo admin), so the
// status page shows as an admin's preview whether or not it is turned on.
const FAILED = "vllm-llama-70b.service";
const shot = (page: Page, name: string) => page.screenshot({ path: `test-results/screenshots/${test.info().project.name}-${name}.png`, fullPage: true });

test("the Alerts page shows the failed unit's open alert with the agent's diagnosis", async ({ page }) => {
  await page.goto("/alerts");
  await expect(page.getByRole("heading", { name: "Alerts", level: 1 })).toBeVisible();
  const alert = page.getByTestId("alerts-open").locator(`[data-testid="alert"][data-unit="${FAILED}"][data-rule="unit-failed"]`);
  await expect(alert).toBeVisible({ timeout: 30_000 });
  await expect(alert).toContainText("gpu-a");
  await expect(alert).toContainText("Why:");
  await expect(alert.getByRole("link")).toHaveAttribute("href", `/hosts/gpu-a/units/${FAILED}`);
  // a demo panel sends nothing: no channels to configure
  await expect(page.getByRole("heading", { name: "Channels" })).toHaveCount(0);
  await shot(page, "alerts");
});

test("the header's Alerts link, after GPUs, counts the open alerts and leads to the Alerts page", async ({ page }) => {
  await page.goto("/");
  const nav = page.getByRole("navigation", { name: "Main" });
  // it shows once the page knows who is signed in
  await expect(nav.getByRole("link", { name: /^Alerts/ })).toBeVisible();
  const links = await nav.getByRole("link").allInnerTexts();
  expect(links.findIndex((t) => t.startsWith("Alerts"))).toBe(links.indexOf("GPUs") + 1);
  // gpu-a's failed unit is open from the start
  await expect(nav.getByTestId("nav-alerts-count")).toHaveText(/^\d+\+? open$/, { timeout: 40_000 });
  await nav.getByRole("link", { name: /^Alerts/ }).click();
  await expect(page).toHaveURL(/\/alerts$/);
  await expect(page.getByRole("heading", { name: "Alerts", level: 1 })).toBeVisible();
});

test("the status page: every service in plain words with uptime, no command lines, PIDs or hosts; fits the screen", async ({ page }) => {
  await page.goto("/status");
  await expect(page.getByRole("heading", { name: "Service status", level: 1 })).toBeVisible();
  const kimi = page.locator("section.svc", { hasText: "vLLM: Kimi K2.5 (TP=8)" }).first();
  await expect(kimi).toBeVisible();
  await expect(kimi.locator(".words")).toHaveText(/Serving|Starting|Degraded|Down/);
  await expect(page.locator("section.svc", { hasText: "vLLM: Llama 3.3 70B" }).first().locator(".words")).toHaveText(/^Down since /);
  const text = (await page.locator("main").innerText()).toLowerCase();
  for (const internal of ["/opt/vllm", "--port", "execstart", "gpu-a", "journal"]) expect(text).not.toContain(internal);
  expect(text).not.toMatch(/\bpids?\b/);
  await expect(page.getByRole("button")).toHaveCount(0);
  // no sideways scrolling on a phone
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await shot(page, "status");
});
