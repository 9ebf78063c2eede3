/**
 * Sign-in, roles and the audit log in a browser, against a NON-demo panel (login required) on a
 * simulated host, seeded through the user CLI (see authServer.ts; project "auth").
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, test, type Page } from "./fixtures";
import { E2E_AUTH_DATA_DIR, E2E_AUTH_HOST, E2E_PASSWORD } from "./authServer";

test.describe.configure({ mode: "serial" });

const EMBED = "vllm-embed-small.service";
const KIMI = "vllm-kimi-k25.service";
const REASON = `e2e auth: operator restart ${Date.now()}`;
/** a unit's page on the panel's one host */
const unitPage = (unit: string) => `/hosts/${E2E_AUTH_HOST}/units/${unit}`;

async function signIn(page: Page, user: string, password = E2E_PASSWORD) {
  await page.getByLabel("User name").fill(user);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

test("signed out, a page sends you to sign in; a wrong password is refused clearly; then you land where you were going", async ({ page }) => {
  // the single-host panel's link: after signing in it leads on to the unit on its host
  await page.goto(`/units/${EMBED}`);
  await expect(page).toHaveURL(/\/login\?next=%2Funits%2Fvllm-embed-small\.service$/);
  await signIn(page, "vera", "not the password at all");
  await expect(page.getByTestId("login-error")).toHaveText("Invalid username or password.");
  await signIn(page, "vera");
  await expect(page).toHaveURL(new RegExp(`${unitPage(EMBED).replace(/\./g, "\\.")}$`));
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(EMBED);
  await expect(page.getByTestId("user-name")).toHaveText("vera");
});

test("a viewer sees units but no action buttons, no audit link, and no audit log", async ({ page }) => {
  await page.goto("/login");
  await signIn(page, "vera");
  await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live");
  await expect(page.getByTestId("unit-row")).toHaveCount(4);
  for (const unit of [EMBED, KIMI]) {
    await page.goto(unitPage(unit));
    await expect(page.getByTestId("state-badge").first()).toBeVisible();
    await expect(page.getByText(/viewers cannot change units/).first()).toBeVisible();
    await expect(page.getByRole("group", { name: "Unit actions" })).toHaveCount(0);
    for (const name of ["Start", "Stop", "Restart", "Reset failed", "Kill (SIGKILL)"]) {
      await expect(page.getByRole("button", { name, exact: true })).toHaveCount(0);
    }
  }
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit" })).toHaveCount(0);
  await page.goto("/audit");
  await expect(page.getByTestId("audit-error")).toContainText("viewers cannot see the audit log");
});

test("an operator restarts their unit with a reason and finds it in /audit, by unit, and in the CSV", async ({ page }) => {
  await page.goto("/login");
  await signIn(page, "otto");
  await expect(page.getByTestId("user-name")).toHaveText("otto");
  // outside their patterns: no buttons
  await page.goto(unitPage(KIMI));
  await expect(page.getByText(/is not in your units \(vllm-embed-\*\)/).first()).toBeVisible();
  await expect(page.getByRole("group", { name: "Unit actions" })).toHaveCount(0);

  await page.goto(unitPage(EMBED));
  await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live");
  await page.getByRole("group", { name: "Unit actions" }).getByRole("button", { name: "Restart", exact: true }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel(/Reason/).fill(REASON);
  await dialog.getByRole("button", { name: `Restart ${EMBED}` }).click();
  await expect(page.getByTestId("job-progress")).toContainText(/Job #\d+ \(restart\)/);

  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit" }).click();
  await expect(page).toHaveURL(/\/audit$/);
  const row = page.getByTestId("audit-row").filter({ hasText: REASON });
  await expect(row).toHaveCount(1);
  await expect(row).toHaveAttribute("data-user", "otto");
  await expect(row).toHaveAttribute("data-action", "restart");
  await expect(row).toHaveAttribute("data-unit", EMBED);
  await expect(row).toHaveAttribute("data-host", E2E_AUTH_HOST);
  await expect(row).toContainText("operator");
  // the job result arrives when the job ends (the page refreshes every 10 s)
  await expect(row).toHaveAttribute("data-outcome", "done", { timeout: 25_000 });

  // filter by unit from the row; the filter lives in the URL and survives a reload
  await row.getByRole("link", { name: EMBED, exact: true }).click();
  await expect(page).toHaveURL(/\/audit\?unit=vllm-embed-small\.service$/);
  await page.reload();
  await expect(page.getByLabel("Unit")).toHaveValue(EMBED);
  await expect(page.getByTestId("audit-row").filter({ hasText: REASON })).toHaveCount(1);
  await expect(page.getByTestId("audit-row").and(page.locator(`:not([data-unit="${EMBED}"])`))).toHaveCount(0);

  // CSV export with the same filter, as a download
  const href = await page.getByTestId("audit-csv").getAttribute("href");
  expect(href).toBe(`/api/audit.csv?unit=${EMBED}`);
  const csv = await page.request.get(href!);
  expect(csv.status()).toBe(200);
  expect(csv.headers()["content-type"]).toBe("text/csv; charset=utf-8");
  expect(csv.headers()["content-disposition"]).toMatch(/^attachment; filename="gpudeck-audit-\d{8}-\d{6}Z\.csv"$/);
  const text = await csv.text();
  expect(text).toContain(`"${REASON}"`);
  expect(text).toContain('"otto"');
});

test("signing out ends the session; the agent's token never reaches the browser", async ({ page }) => {
  const scripts: string[] = [];
  page.on("response", async (res) => {
    if (res.request().resourceType() === "script" || res.url().includes("/_next/")) scripts.push(await res.text().catch(() => ""));
  });
  await page.goto("/login");
  await signIn(page, "otto");
  await expect(page.getByTestId("user-name")).toHaveText("otto");
  const token = readFileSync(path.join(E2E_AUTH_DATA_DIR, "agent-token"), "utf8").trim();
  expect(token.length).toBeGreaterThan(20);
  expect(scripts.length).toBeGreaterThan(0);
  for (const s of scripts) expect(s.includes(token)).toBe(false);
  expect((await page.content()).includes(token)).toBe(false);

  await page.getByTestId("user-menu").locator("summary").click();
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login$/);
  await page.goto("/gpus");
  await expect(page).toHaveURL(/\/login\?next=%2Fgpus$/);
  expect((await page.context().cookies()).filter((c) => c.name === "gpudeck_session")).toHaveLength(0);
});

test("an admin adds a user on /users, who signs in; disabling them signs their open page out", async ({ page, browser }) => {
  // the disabled user's page notices at its next session check (at most a minute)
  test.setTimeout(180_000);
  const name = `pat-${Date.now().toString(36)}`;
  const password = "pat's own long passphrase";

  await page.goto("/login");
  await signIn(page, "ada");
  await expect(page.getByTestId("user-name")).toHaveText("ada");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Users" }).click();
  await expect(page).toHaveURL(/\/users$/);
  await expect(page.getByTestId("user-row").filter({ hasText: "vera" })).toBeVisible();

  // a refused attempt (the name exists) says why and keeps everything typed
  const form = page.getByRole("form", { name: "Add user" });
  await form.getByLabel("User name").fill("vera");
  await form.getByLabel("Role").selectOption("operator");
  await form.getByLabel("Unit patterns").fill("vllm-embed-*");
  await form.getByLabel("Password", { exact: true }).fill(password);
  await form.getByLabel("Password again").fill(password);
  await form.getByRole("button", { name: "Add user" }).click();
  await expect(page.getByTestId("add-user-error")).toHaveText("A user named 'vera' already exists.");
  await expect(form.getByLabel("Unit patterns")).toHaveValue("vllm-embed-*");
  await expect(form.getByLabel("Password", { exact: true })).toHaveValue(password);

  await form.getByLabel("User name").fill(name);
  await form.getByRole("button", { name: "Add user" }).click();
  await expect(page.getByRole("status").filter({ hasText: `Added ${name} (operator)` })).toBeVisible();
  const row = page.locator(`[data-testid="user-row"][data-user="${name}"]`);
  await expect(row).toHaveAttribute("data-state", "enabled");
  await expect(row).toContainText("vllm-embed-*");

  // the new user signs in in a browser of their own
  const theirs = await browser.newContext();
  try {
    const userPage = await theirs.newPage();
    await userPage.goto("/login");
    await signIn(userPage, name, password);
    await expect(userPage.getByTestId("user-name")).toHaveText(name);
    await expect(userPage.getByTestId("connection")).toHaveAttribute("data-state", "live");

    // the admin disables them: a confirm step first
    await row.getByRole("button", { name: "Disable", exact: true }).click();
    await page.getByRole("button", { name: `Disable ${name}` }).click();
    await expect(row).toHaveAttribute("data-state", "disabled");
    await expect(row.getByRole("status")).toContainText(`${name} is disabled and signed out everywhere`);

    // their live stream ends at once, and with it the page: it lands on the sign-in page
    // (the periodic session check is a minute; this must not wait for it)
    await expect(userPage).toHaveURL(/\/login(\?|$)/, { timeout: 10_000 });
    await signIn(userPage, name, password);
    await expect(userPage.getByTestId("login-error")).toHaveText("Invalid username or password.");
  } finally {
    await theirs.close();
  }

  // both changes are in the audit log, without the password
  await page.goto(`/audit?user=ada`);
  await expect(page.getByTestId("audit-row").and(page.locator('[data-action="user.add"][data-outcome="ok"]')).filter({ hasText: name })).toHaveCount(1);
  await expect(page.getByTestId("audit-row").and(page.locator('[data-action="user.disable"][data-outcome="ok"]')).filter({ hasText: name })).toHaveCount(1);
  await expect(page.getByTestId("audit-table")).not.toContainText(password);

  // the page fits a phone: one card per user, no sideways scrolling, even with a form open
  await page.goto("/users");
  await page.getByTestId("user-row").filter({ hasText: "otto" }).getByRole("button", { name: "Reset password" }).click();
  await expect(page.getByRole("form", { name: "Reset password of otto" })).toBeVisible();
  await page.screenshot({ path: "test-results/screenshots/auth-users-desktop.png", fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Users" })).toBeVisible();
  const { scrollWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth }));
  expect(scrollWidth, `/users is ${scrollWidth}px wide in a 390px viewport`).toBeLessThanOrEqual(390);
  await page.screenshot({ path: "test-results/screenshots/auth-users-phone.png", fullPage: true });
});

test("an admin adds a host nobody can reach: it shows down with a clear error, on /hosts and the overview; viewers see hosts without addresses; the admin removes it", async ({
  page,
  browser,
}) => {
  const name = `gpu-x-${Date.now().toString(36)}`;
  const token = "e2e-host-token-0123456789abcdef-0123456789abcdef";
  // a closed port (not one of fetch's blocked ones): "connection refused", as for an agent that is not running
  const unreachable = "http://127.0.0.1:59999";

  await page.goto("/login");
  await signIn(page, "ada");
  await expect(page.getByTestId("user-name")).toHaveText("ada");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Hosts" }).click();
  await expect(page).toHaveURL(/\/hosts$/);

  // the panel's own host comes from its environment: read-only, and it says where to change it
  const own = page.locator(`[data-testid="host-entry"][data-host="${E2E_AUTH_HOST}"]`);
  await expect(own).toHaveAttribute("data-state", "connected");
  await expect(own.getByTestId("host-source")).toHaveText("from GPUDECK_AGENT_URL (read-only here)");
  await expect(own.getByTestId("host-token")).toHaveText(/^set, ends in …/);
  await expect(own.getByRole("button", { name: "Remove" })).toHaveCount(0);

  // a refused attempt says why and keeps what was typed; the token is a password field
  const form = page.getByRole("form", { name: "Add host" });
  await expect(form.getByLabel("Agent token")).toHaveAttribute("type", "password");
  await form.getByLabel("Host name").fill(name);
  await form.getByLabel("Agent URL").fill("ftp://127.0.0.1:9");
  await form.getByLabel("Agent token").fill(token);
  await form.getByRole("button", { name: "Add host" }).click();
  await expect(page.getByTestId("add-host-error")).toContainText("url must start with http:// or https://");
  await expect(form.getByLabel("Host name")).toHaveValue(name);

  await form.getByLabel("Agent URL").fill(unreachable);
  await form.getByRole("button", { name: "Add host" }).click();
  await expect(page.getByRole("status").filter({ hasText: `Added ${name}.` })).toBeVisible();
  await expect(form.getByLabel("Agent token")).toHaveValue("");
  const entry = page.locator(`[data-testid="host-entry"][data-host="${name}"]`);
  await expect(entry).toHaveAttribute("data-state", "down");
  await expect(entry.getByTestId("host-since")).toHaveText(/^down since \d\d:\d\d:\d\d \(/);
  await expect(entry.getByTestId("host-error")).toContainText(`the agent at ${unreachable} could not be reached`);
  await expect(entry.getByTestId("host-source")).toHaveText("added on this page");
  await expect(entry).toContainText(unreachable);
  // the token went in and never comes back: only its last characters
  await expect(entry.getByTestId("host-token")).toHaveText("set, ends in …cdef");
  expect(await page.content()).not.toContain(token);

  // the fleet overview shows it down too, with the same error
  await page.goto("/");
  const card = page.locator(`[data-testid="host-card"][data-host="${name}"]`);
  await expect(card.getByTestId("host-state")).toHaveText("down");
  await expect(card.getByTestId("host-error")).toContainText("could not be reached");
  await expect(page.locator(`[data-testid="host-card"][data-host="${E2E_AUTH_HOST}"]`).getByTestId("host-state")).toHaveText("connected");

  // a viewer sees the hosts, not where they are nor their tokens, and cannot change them
  const theirs = await browser.newContext();
  try {
    const viewer = await theirs.newPage();
    await viewer.goto("/login");
    await signIn(viewer, "vera");
    await expect(viewer.getByTestId("user-name")).toHaveText("vera");
    await expect(viewer.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Hosts" })).toHaveCount(0);
    await viewer.goto("/hosts");
    await expect(viewer.locator(`[data-testid="host-entry"][data-host="${name}"]`)).toHaveAttribute("data-state", "down");
    await expect(viewer.getByRole("form", { name: "Add host" })).toHaveCount(0);
    await expect(viewer.getByTestId("host-token")).toHaveCount(0);
    // the connection error names the agent's address and token file: a viewer gets a sentence without them
    const theirEntry = viewer.locator(`[data-testid="host-entry"][data-host="${name}"]`);
    await expect(theirEntry.getByTestId("host-error")).toContainText("the agent could not be reached; an admin sees the details");
    await expect(theirEntry.getByTestId("host-error")).not.toContainText(unreachable);
    expect(await viewer.content()).not.toContain(unreachable);
    await expect(viewer.getByText("Agent URL")).toHaveCount(0);
    await expect(viewer.getByRole("button", { name: "Remove" })).toHaveCount(0);
  } finally {
    await theirs.close();
  }

  // edited: a new address on another origin needs the token again (a stored token never follows a
  // moved URL), and what was typed stays; then the panel reconnects there
  const moved = "http://127.0.0.1:59998";
  await page.goto("/hosts");
  await entry.getByRole("button", { name: "Edit" }).click();
  const edit = page.getByRole("form", { name: `Edit ${name}` });
  await expect(edit.getByLabel("New agent token")).toHaveAttribute("type", "password");
  await expect(edit.getByLabel("New agent token")).toHaveValue("");
  await expect(edit.getByLabel("Pinned fingerprint (https, optional)")).toHaveValue("");
  await edit.getByLabel("Agent URL").fill(moved);
  await edit.getByRole("button", { name: `Save ${name}` }).click();
  await expect(edit).toContainText("give the agent token again");
  await expect(edit.getByLabel("Agent URL")).toHaveValue(moved);
  await edit.getByLabel("New agent token").fill(token);
  await edit.getByRole("button", { name: `Save ${name}` }).click();
  await expect(entry.getByRole("status")).toContainText(`Saved ${name}.`);
  await expect(entry.getByTestId("host-error")).toContainText(`the agent at ${moved} could not be reached`);
  await expect(entry.getByTestId("host-token")).toHaveText("set, ends in …cdef");

  // the page fits a phone
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(entry).toBeVisible();
  const { scrollWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth }));
  expect(scrollWidth, `/hosts is ${scrollWidth}px wide in a 390px viewport`).toBeLessThanOrEqual(390);
  await page.screenshot({ path: "test-results/screenshots/auth-hosts-phone.png", fullPage: true });
  await page.setViewportSize({ width: 1366, height: 900 });

  // removed: gone from the page, and both changes are in the audit log with the host
  await entry.getByRole("button", { name: "Remove" }).click();
  await page.getByRole("button", { name: `Remove ${name}` }).click();
  await expect(page.getByRole("status").filter({ hasText: `Removed ${name}.` })).toBeVisible();
  await expect(entry).toHaveCount(0);
  await page.goto("/");
  await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live");
  await expect(page.locator(`[data-testid="host-card"][data-host="${name}"]`)).toHaveCount(0);
  await page.goto("/audit?user=ada");
  for (const action of ["host.add", "host.update", "host.remove"]) {
    await expect(page.locator(`[data-testid="audit-row"][data-action="${action}"][data-host="${name}"][data-outcome="ok"]`)).toHaveCount(1);
  }
  await expect(page.getByTestId("audit-table")).not.toContainText(token);
});
