import { expect, test, type Page } from "@playwright/test";
import { expectAccessible } from "./axe";

// Every page of the demo passes axe-core's WCAG 2.0/2.1 A and AA rules, in light and dark, at
// desktop width (1440 px) and on a phone (390 px, the phone project). One load per page: both
// colour schemes are checked on it. The sign-in pages: accessibility.auth.spec.ts.
test.describe.configure({ mode: "serial" });

const KIMI_PAGE = "/hosts/gpu-a/units/vllm-kimi-k25.service";

async function waitLive(page: Page) {
  await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live");
}

const ROUTES: { route: string; ready: (page: Page) => Promise<void> }[] = [
  { route: "/", ready: async (p) => (await waitLive(p), await expect(p.getByTestId("unit-row").first()).toBeVisible()) },
  { route: "/hosts", ready: waitLive },
  { route: "/hosts/gpu-a", ready: async (p) => (await waitLive(p), await expect(p.getByTestId("unit-row").first()).toBeVisible()) },
  { route: KIMI_PAGE, ready: async (p) => (await waitLive(p), await expect(p.getByTestId("state-badge").first()).toBeVisible()) },
  { route: "/hosts/gpu-a/gpus", ready: waitLive },
  { route: "/gpus", ready: async (p) => await expect(p.getByTestId("host-choice")).toBeVisible() },
  // with the failed unit's open alert on its red tint
  { route: "/alerts", ready: async (p) => (await waitLive(p), await expect(p.getByTestId("alert").first()).toBeVisible({ timeout: 40_000 })) },
  { route: "/audit", ready: waitLive },
  { route: "/status", ready: async (p) => await expect(p.locator("section.svc").first()).toBeVisible() },
];

test.beforeEach(async ({ page }) => {
  if (page.viewportSize()!.width > 1000) await page.setViewportSize({ width: 1440, height: 900 });
});

for (const { route, ready } of ROUTES) {
  test(`${route} passes WCAG 2.1 AA (axe) in light and dark`, async ({ page }) => {
    await page.goto(route);
    await ready(page);
    await page.waitForTimeout(300); // charts measure their width after the first paint
    await expectAccessible(page, route);
  });
}

test("the restart dialog passes WCAG 2.1 AA (axe) in light and dark", async ({ page }) => {
  await page.goto(KIMI_PAGE);
  await waitLive(page);
  await page.getByRole("group", { name: "Unit actions" }).getByRole("button", { name: "Restart", exact: true }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog).toBeVisible();
  await expectAccessible(page, `${KIMI_PAGE} restart dialog`, { include: "dialog[open]" });
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(dialog).toBeHidden();
});
