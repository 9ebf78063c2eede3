/**
 * The pages behind sign-in pass axe-core's WCAG 2.0/2.1 A and AA rules, in light and dark, at
 * desktop (1440 px) and phone (390 px) width, on the login-required panel (project "auth", see
 * authServer.ts): the sign-in form, then as an admin every page with its admin-only parts.
 */
import { expect, test } from "./fixtures";
import { expectAccessible, waitReady } from "./axe";
import { E2E_AUTH_HOST, E2E_PASSWORD } from "./authServer";

test.describe.configure({ mode: "serial" });

const WIDTHS = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
];

test("the sign-in page and its refusal pass WCAG 2.1 AA (axe) in light and dark", async ({ page }) => {
  await page.goto("/login");
  await page.getByLabel("User name").fill("vera");
  await page.getByLabel("Password").fill("not the password at all");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("login-error")).toBeVisible();
  for (const size of WIDTHS) {
    await page.setViewportSize(size);
    await expectAccessible(page, "/login (refused)");
  }
});

test("an admin's pages pass WCAG 2.1 AA (axe) in light and dark", async ({ page }) => {
  test.setTimeout(180_000);
  await page.goto("/login");
  await page.getByLabel("User name").fill("ada");
  await page.getByLabel("Password").fill(E2E_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("user-name")).toHaveText("ada");
  for (const route of ["/", "/hosts", `/hosts/${E2E_AUTH_HOST}/units/vllm-embed-small.service`, "/alerts", "/users", "/account", "/audit"]) {
    await page.goto(route);
    await waitReady(page, route);
    for (const size of WIDTHS) {
      await page.setViewportSize(size);
      await expectAccessible(page, route);
    }
  }
});
