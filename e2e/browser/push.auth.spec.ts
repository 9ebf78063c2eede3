/**
 * The installable app and "Notify this device", in a browser against the non-demo panel
 * (project "auth"): the manifest, its icons and the service worker are served, and the Account
 * page offers push on a secure origin (127.0.0.1 is one to browsers).
 */
import { expect, test } from "./fixtures";
import { E2E_PASSWORD } from "./authServer";

test("the manifest, its icons and a service worker that handles push only are served", async ({ request }) => {
  const manifest = await request.get("/manifest.webmanifest");
  expect(manifest.ok()).toBe(true);
  const body = (await manifest.json()) as { name: string; display: string; icons: { src: string; type: string }[] };
  expect(body).toMatchObject({ name: "gpudeck", display: "standalone" });
  for (const icon of body.icons) {
    const r = await request.get(icon.src);
    expect(r.ok(), icon.src).toBe(true);
    expect(r.headers()["content-type"]).toContain(icon.type);
  }
  const sw = await request.get("/sw.js");
  expect(sw.ok()).toBe(true);
  const code = await sw.text();
  expect(code).toContain('addEventListener("push"');
  expect(code).toContain('addEventListener("notificationclick"');
  expect(code).not.toContain('addEventListener("fetch"');
});

test("the Account page has a Notify this device section", async ({ page }) => {
  await page.goto("/login?next=%2Faccount");
  await page.getByLabel("User name").fill("vera");
  await page.getByLabel("Password").fill(E2E_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/account$/);
  const section = page.getByTestId("push-section");
  await expect(section.getByRole("heading", { name: "Notify this device" })).toBeVisible();
  await expect(section.getByRole("button", { name: "Notify this device" })).toBeVisible();
});
