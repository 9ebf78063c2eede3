import { expect, test, type Page } from "./fixtures";
import { expectAccessible, waitReady } from "./axe";

// Every page of the demo passes axe-core's WCAG 2.0/2.1 A and AA rules, in light and dark, at
// desktop width (1440 px) and on a phone (390 px, the phone project). One load per page: both
// colour schemes are checked on it. The sign-in pages: accessibility.auth.spec.ts. Not serial:
// one page's failure does not skip the others.

const KIMI_PAGE = "/hosts/gpu-a/units/vllm-kimi-k25.service";
/** a shared journal link (the filter bar's "Copy link"): a fixed range and a text, the journal drawn at once with its histogram */
const SHARED_JOURNAL = `${KIMI_PAGE}?jsince=${Date.now() - 86_400_000}&juntil=${Date.now() + 3_600_000}&jq=KIMI`;

/** what each page must show before it is checked, beyond waitReady */
const ROUTES: { route: string; name?: string; ready?: (page: Page) => Promise<void> }[] = [
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
  {
    route: SHARED_JOURNAL,
    name: "a shared journal link", // the test's title must not change between loads of this file
    ready: async (p) => {
      await expect(p.getByTestId("journal-histogram")).toBeVisible();
      await expect(p.getByRole("region", { name: "Journal lines" }).getByTestId("journal-line").first()).toBeVisible();
    },
  },
  // the single-host panel's unit link, for a unit no host has (a known one goes straight on to its page)
  { route: "/units/no-such-unit.service", ready: (p) => expect(p.getByTestId("old-link-none")).toBeVisible({ timeout: 20_000 }) },
  // what the demo shows on the pages of a panel with users
  { route: "/users", ready: (p) => expect(p.getByTestId("users-demo")).toBeVisible() },
  { route: "/account", ready: (p) => expect(p.getByText("Demo mode has no passwords.")).toBeVisible() },
  { route: "/login", ready: (p) => expect(p.getByText("Demo mode needs no sign-in.")).toBeVisible() },
  { route: "/setup", ready: (p) => expect(p.getByText(/one-time setup link/)).toBeVisible() },
];

test.beforeEach(async ({ page }) => {
  if (page.viewportSize()!.width > 1000) await page.setViewportSize({ width: 1440, height: 900 });
});

for (const { route, name = route, ready } of ROUTES) {
  test(`${name} passes WCAG 2.1 AA (axe) in light and dark`, async ({ page }) => {
    const response = await page.goto(route);
    // the status page keeps its strict CSP: axe goes in through Playwright's evaluate, which the
    // page's CSP does not govern, not through a script tag the page would have to allow
    if (route === "/status") {
      expect(response!.headers()["content-security-policy"]).toMatch(/^default-src 'none';.* script-src 'nonce-[A-Za-z0-9+/=]+';/);
      expect(response!.headers()["content-security-policy"]).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/);
    }
    await ready?.(page);
    await waitReady(page, route);
    await expectAccessible(page, name);
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

test("the alerts page with an open alert's acknowledgement form passes WCAG 2.1 AA (axe) in light and dark", async ({ page }) => {
  await page.goto("/alerts");
  const alert = page.getByTestId("alerts-open").getByTestId("alert").first();
  await expect(alert).toBeVisible({ timeout: 40_000 });
  await waitReady(page, "/alerts");
  // opened, not sent: the acknowledgement would stay in the demo's database (oncall.spec.ts sends one)
  await alert.getByRole("button", { name: "Acknowledge" }).click();
  await expect(alert.getByLabel("Note (optional)")).toBeVisible();
  await expectAccessible(page, "/alerts acknowledging");
});
