/**
 * The Account page in a browser (project "auth", authServer.ts): an API token made, shown once
 * and revoked; two-factor sign-in set up with a code computed here with otplib, then a sign-in
 * with password and code, a wrong code refused clearly, new recovery codes. The user is tess, whom no other spec uses.
 */
import { expect, test, type Page } from "./fixtures";
import { authenticator } from "otplib";
import { E2E_PASSWORD } from "./authServer";

test.describe.configure({ mode: "serial" });

async function signIn(page: Page, user: string) {
  await page.goto("/login");
  await page.getByLabel("User name").fill(user);
  await page.getByLabel("Password").fill(E2E_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** the code an authenticator app shows `offsetMs` from now */
const codeAt = (secret: string, offsetMs = 0) => authenticator.clone({ epoch: Date.now() + offsetMs }).generate(secret);

test("an API token is shown once, listed without its secret, and refused once revoked", async ({ page, request }) => {
  await signIn(page, "tess");
  await expect(page.getByTestId("user-name")).toHaveText("tess");
  await page.goto("/account");
  const section = page.getByTestId("tokens-section");
  await section.getByLabel("Token name").fill("e2e-ci");
  await section.getByRole("button", { name: "Make token" }).click();
  const shown = section.getByTestId("new-token").locator("code");
  await expect(shown).toHaveText(/^gdk_[A-Za-z0-9_-]{43}$/);
  const token = (await shown.textContent())!;
  // as a script calls: no cookie (`request` has none of the page's), no Origin
  const units = (t: string) => request.get("/api/trpc/hosts.list", { headers: { authorization: `Bearer ${t}` } });
  expect((await units(token)).status()).toBe(200);
  await page.reload();
  await expect(section.getByRole("list", { name: "API tokens" }).getByText("e2e-ci")).toBeVisible();
  expect(await page.content()).not.toContain(token);
  page.once("dialog", (d) => void d.accept());
  await section.getByRole("button", { name: "Revoke token e2e-ci" }).click();
  await expect(section.getByRole("list", { name: "API tokens" }).getByText("e2e-ci")).toHaveCount(0);
  expect((await units(token)).status()).toBe(401);
});

test("two-factor sign-in: set up with a code, then password + code; a wrong code is refused", async ({ page }) => {
  await signIn(page, "tess");
  await expect(page.getByTestId("user-name")).toHaveText("tess");
  await page.goto("/account");
  const section = page.getByTestId("two-factor-section");
  await section.getByRole("button", { name: "Set up two-factor sign-in" }).click();
  await expect(section.getByRole("img", { name: /QR code/ })).toBeVisible();
  const secret = (await section.getByTestId("two-factor-secret").textContent())!.trim();
  await section.getByLabel("Code from the app").fill(codeAt(secret));
  await section.getByRole("button", { name: "Turn on" }).click();
  await expect(section.getByRole("list", { name: "Recovery codes" }).getByRole("listitem")).toHaveCount(10);
  const recoveryCodes = await section.getByRole("list", { name: "Recovery codes" }).getByRole("listitem").allTextContents();
  await section.getByRole("button", { name: "I have saved them" }).click();
  await expect(section.getByTestId("two-factor-on")).toContainText("10 recovery codes left");

  await page.getByTestId("user-menu").locator("summary").click();
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login$/);

  await signIn(page, "tess");
  // no session after the password alone
  await expect(page.getByLabel("Authentication code")).toBeVisible();
  expect((await page.context().cookies()).filter((c) => c.name === "gpudeck_session")).toHaveLength(0);
  // a code no authenticator shows now (not within a step of now)
  const near = new Set([-1, 0, 1, 2].map((k) => codeAt(secret, k * 30_000)));
  const wrong = ["000000", "111111", "222222", "333333", "444444"].find((c) => !near.has(c))!;
  await page.getByLabel("Authentication code").fill(wrong);
  await page.getByRole("button", { name: "Verify" }).click();
  await expect(page.getByTestId("login-error")).toContainText("Wrong code");
  // the next step's code: the one used to turn it on may still be the current one, and a code works once
  await page.getByLabel("Authentication code").fill(codeAt(secret, 30_000));
  await page.getByRole("button", { name: "Verify" }).click();
  await expect(page.getByTestId("user-name")).toHaveText("tess");
  expect((await page.context().cookies()).filter((c) => c.name === "gpudeck_session")).toHaveLength(1);

  // new recovery codes, confirmed with the password and one of the old codes (the app's next code
  // was just used): ten new ones, none of the old
  await page.goto("/account");
  const renew = page.getByRole("form", { name: "New recovery codes" });
  await page.getByText("New recovery codes", { exact: true }).click();
  await renew.getByLabel("Password").fill(E2E_PASSWORD);
  await renew.getByLabel(/Code from the app/).fill(recoveryCodes[0]!);
  await renew.getByRole("button", { name: "Make new recovery codes" }).click();
  await expect(section.getByText("New recovery codes: the old ones no longer work.")).toBeVisible();
  const fresh = await section.getByRole("list", { name: "Recovery codes" }).getByRole("listitem").allTextContents();
  expect(fresh).toHaveLength(10);
  expect(fresh.filter((c) => recoveryCodes.includes(c))).toEqual([]);
  await section.getByRole("button", { name: "I have saved them" }).click();
  await expect(section.getByTestId("two-factor-on")).toContainText("10 recovery codes left");
});
