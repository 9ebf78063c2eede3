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

// The notification's "Acknowledge" runs the service worker's own code (public/sw.js) with the
// session this browser signed in with: a notification cannot be clicked in a headless browser, so
// the test calls the handler's `acknowledge` inside the real worker (its global scope).
test("Acknowledge in the notification acknowledges the alert as the signed-in person, and says so", async ({ page, context }) => {
  test.setTimeout(120_000);
  await context.grantPermissions(["notifications"]);
  await page.goto("/login?next=%2Faccount");
  await page.getByLabel("User name").fill("ada");
  await page.getByLabel("Password").fill(E2E_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/account$/);
  const registered = context.serviceWorkers()[0] ?? context.waitForEvent("serviceworker");
  await page.evaluate(() => navigator.serviceWorker.register("/sw.js", { scope: "/" }).then(() => navigator.serviceWorker.ready));
  const sw = await registered;

  // the simulated host's vllm-llama-70b fails from the start: its unit-failed alert opens
  type Alert = { id: number; rule: string; unit: string | null; acknowledgedBy?: string | null };
  const openAlert = async (): Promise<Alert | undefined> => {
    const r = await page.request.get(`/api/trpc/alerts.list?input=${encodeURIComponent(JSON.stringify({ state: "open" }))}`);
    expect(r.ok(), await r.text()).toBe(true);
    const { alerts } = (await r.json()).result.data as { alerts: Alert[] };
    return alerts.find((a) => a.rule === "unit-failed" && a.unit === "vllm-llama-70b.service");
  };
  let alert: Alert | undefined;
  await expect(async () => {
    alert = await openAlert();
    expect(alert).toBeDefined();
  }).toPass({ timeout: 60_000 });
  expect(alert!.acknowledgedBy ?? null).toBeNull();

  const shown = await sw.evaluate(async (id: number) => {
    const g = self as unknown as {
      acknowledge: (id: number, href: string) => Promise<void>;
      registration: { getNotifications: (o: { tag: string }) => Promise<{ title: string }[]> };
    };
    await g.acknowledge(id, "/");
    return (await g.registration.getNotifications({ tag: `ack-${id}` })).map((n) => n.title);
  }, alert!.id);
  expect(shown).toEqual(["Acknowledged"]);
  expect((await openAlert())?.acknowledgedBy).toBe("ada");
});
