import { expect, test, type Page } from "./fixtures";
import { expectAccessible, waitReady } from "./axe";

// Every page of the demo passes axe-core's WCAG 2.0/2.1 A and AA rules, in light and dark, at
// desktop width (1440 px) and on a phone (390 px, the phone project). One load per page: both
// colour schemes are checked on it. The sign-in pages: accessibility.auth.spec.ts. Not serial:
// one page's failure does not skip the others.

const KIMI_PAGE = "/hosts/gpu-a/units/vllm-kimi-k25.service";

/** what each page must show before it is checked, beyond waitReady */
const ROUTES: { route: string; ready?: (page: Page) => Promise<void> }[] = [
  { route: "/", ready: (p) => expect(p.getByTestId("unit-row").first()).toBeVisible() },
  { route: "/hosts" },
  { route: "/hosts/gpu-a", ready: (p) => expect(p.getByTestId("unit-row").first()).toBeVisible() },
  { route: KIMI_PAGE, ready: (p) => expect(p.getByTestId("state-badge").first()).toBeVisible() },
  { route: "/hosts/gpu-a/gpus" },
  { route: "/gpus", ready: (p) => expect(p.getByTestId("host-choice")).toBeVisible() },
  // with the failed unit's open alert on its red tint
  { route: "/alerts", ready: (p) => expect(p.getByTestId("alert").first()).toBeVisible({ timeout: 40_000 }) },
  { route: "/audit" },
  { route: "/status", ready: (p) => expect(p.locator("section.svc").first()).toBeVisible() },
];

test.beforeEach(async ({ page }) => {
  if (page.viewportSize()!.width > 1000) await page.setViewportSize({ width: 1440, height: 900 });
});

for (const { route, ready } of ROUTES) {
  test(`${route} passes WCAG 2.1 AA (axe) in light and dark`, async ({ page }) => {
    await page.goto(route);
    await ready?.(page);
    await waitReady(page, route);
    await expectAccessible(page, route);
  });
}

test("the restart dialog passes WCAG 2.1 AA (axe) in light and dark", async ({ page }) => {
  await page.goto(KIMI_PAGE);
  await waitReady(page, KIMI_PAGE);
  await page.getByRole("group", { name: "Unit actions" }).getByRole("button", { name: "Restart", exact: true }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog).toBeVisible();
  await expectAccessible(page, `${KIMI_PAGE} restart dialog`, { include: "dialog[open]" });
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(dialog).toBeHidden();
});
