/**
 * The pages behind sign-in pass axe-core's WCAG 2.0/2.1 A and AA rules, in light and dark, at
 * desktop (1440 px) and phone (390 px) width, on the login-required panel (project "auth", see
 * authServer.ts): the sign-in form and the first-run setup page, then as an admin every page with
 * its admin-only parts, then two-factor sign-in (nell, whom no other spec uses): set up, refused
 * code, recovery codes, on, and the sign-in's code step.
 */
import { authenticator } from "otplib";
import { expect, test, type Page } from "./fixtures";
import { expectAccessible, waitReady } from "./axe";
import { E2E_AUTH_HOST, E2E_PASSWORD } from "./authServer";

test.describe.configure({ mode: "serial" });

const WIDTHS = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
];

/** the open page at both widths, in light and dark */
async function expectAccessibleAtWidths(page: Page, what: string): Promise<void> {
  for (const size of WIDTHS) {
    await page.setViewportSize(size);
    await expectAccessible(page, what);
  }
  await page.setViewportSize(WIDTHS[0]!);
}

async function signIn(page: Page, user: string): Promise<void> {
  await page.goto("/login");
  await page.getByLabel("User name").fill(user);
  await page.getByLabel("Password").fill(E2E_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
}

test("the sign-in page and its refusal pass WCAG 2.1 AA (axe) in light and dark", async ({ page }) => {
  await page.goto("/login");
  await page.getByLabel("User name").fill("vera");
  await page.getByLabel("Password").fill("not the password at all");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("login-error")).toBeVisible();
  await expectAccessibleAtWidths(page, "/login (refused)");
});

test("the first-run setup page, without and with its link's token, passes WCAG 2.1 AA (axe) in light and dark", async ({ page }) => {
  await page.goto("/setup");
  await expect(page.getByText(/one-time setup link/)).toBeVisible();
  await expectAccessibleAtWidths(page, "/setup (no token)");
  // the form (the token is checked only when it is sent); a new load, not a change of the fragment
  await page.goto("about:blank");
  await page.goto("/setup#token=not-a-real-token");
  await expect(page.getByLabel("Password again")).toBeVisible();
  await expectAccessibleAtWidths(page, "/setup (form)");
});

test("an admin's pages pass WCAG 2.1 AA (axe) in light and dark", async ({ page }) => {
  test.setTimeout(180_000);
  await signIn(page, "ada");
  await expect(page.getByTestId("user-name")).toHaveText("ada");
  const host = `/hosts/${E2E_AUTH_HOST}`;
  for (const route of ["/", "/hosts", host, `${host}/units/vllm-embed-small.service`, `${host}/gpus`, "/alerts", "/users", "/account", "/audit"]) {
    await page.goto(route);
    await waitReady(page, route);
    await expectAccessibleAtWidths(page, route);
  }
});

/** the code an authenticator app shows `offsetMs` from now */
const codeAt = (secret: string, offsetMs = 0) => authenticator.clone({ epoch: Date.now() + offsetMs }).generate(secret);

test("two-factor sign-in's pages pass WCAG 2.1 AA (axe) in light and dark: setting it up, on, and the sign-in's code step", async ({ page }) => {
  test.setTimeout(180_000);
  await signIn(page, "nell");
  await expect(page.getByTestId("user-name")).toHaveText("nell");
  await page.goto("/account");
  const section = page.getByTestId("two-factor-section");
  await section.getByRole("button", { name: "Set up two-factor sign-in" }).click();
  await expect(section.getByRole("img", { name: /QR code/ })).toBeVisible();
  const secret = (await section.getByTestId("two-factor-secret").textContent())!.trim();
  // a code no authenticator shows now: refused, with its message
  const near = new Set([-1, 0, 1, 2].map((k) => codeAt(secret, k * 30_000)));
  const wrong = ["000000", "111111", "222222", "333333", "444444"].find((c) => !near.has(c))!;
  await section.getByLabel("Code from the app").fill(wrong);
  await section.getByRole("button", { name: "Turn on" }).click();
  await expect(section.getByRole("alert")).toBeVisible();
  await expectAccessibleAtWidths(page, "/account (setting up two-factor, a wrong code)");
  await section.getByLabel("Code from the app").fill(codeAt(secret));
  await section.getByRole("button", { name: "Turn on" }).click();
  await expect(section.getByRole("list", { name: "Recovery codes" }).getByRole("listitem")).toHaveCount(10);
  await expectAccessibleAtWidths(page, "/account (recovery codes)");
  await section.getByRole("button", { name: "I have saved them" }).click();
  await expect(section.getByTestId("two-factor-on")).toBeVisible();
  await expectAccessibleAtWidths(page, "/account (two-factor on)");

  await page.getByTestId("user-menu").locator("summary").click();
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login$/);
  await signIn(page, "nell");
  await expect(page.getByLabel("Authentication code")).toBeVisible();
  await expectAccessibleAtWidths(page, "/login (code step)");
  await page.getByLabel("Authentication code").fill(wrong);
  await page.getByRole("button", { name: "Verify" }).click();
  await expect(page.getByTestId("login-error")).toContainText("Wrong code");
  await expectAccessibleAtWidths(page, "/login (code step, wrong code)");
});
