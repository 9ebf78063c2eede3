import { expect, test } from "./fixtures";

// The fleet overview on the 3-host demo (components/fleet/fleetView.ts has the 50-host cases):
// a healthy host is one line until unfolded, and the filters live in the URL — a reload, Back
// and Forward keep them.

test("a healthy host is folded to one line, a button that unfolds it; filters survive reload, back and forward", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live");
  const gpuB = page.locator('[data-testid="host-card"][data-host="gpu-b"]');
  // the other project may have just restarted one of gpu-b's units: folded once it serves again
  await expect(gpuB).toHaveAttribute("data-folded", "true", { timeout: 60_000 });
  const unfold = gpuB.getByRole("button", { name: /^gpu-b · 4 serving$/ });
  await expect(unfold).toHaveAttribute("aria-expanded", "false");
  // by keyboard, as any button
  await unfold.focus();
  await page.keyboard.press("Enter");
  const fold = gpuB.getByRole("button", { name: "Fold gpu-b" });
  await expect(fold).toHaveAttribute("aria-expanded", "true");
  // the keyboard stays on it: the new button has the focus
  await expect(fold).toBeFocused();
  await expect(gpuB.getByTestId("unit-row")).toHaveCount(4);

  // a filter: one flat list of what matches, in the URL
  await page.getByLabel("Filter units by state").selectOption("failed");
  await expect(page).toHaveURL(/\?state=failed$/);
  await expect(page.getByRole("heading", { name: "Units matching the filter" })).toBeVisible();
  await expect(page.getByTestId("unit-row").first()).toHaveAttribute("data-host", "gpu-a");
  await expect(page.getByTestId("host-card")).toHaveCount(0);
  await page.reload();
  await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live");
  await expect(page.getByLabel("Filter units by state")).toHaveValue("failed");
  await expect(page.getByRole("heading", { name: "Units matching the filter" })).toBeVisible();

  // a host's page, then Back: the filter is still there; Forward and Back again keep it
  await page.getByTestId("unit-row").first().getByRole("link").click();
  await expect(page).toHaveURL(/\/hosts\/gpu-a\/units\//);
  await page.goBack();
  await expect(page).toHaveURL(/\?state=failed$/);
  await expect(page.getByLabel("Filter units by state")).toHaveValue("failed");
  await page.goForward();
  await expect(page).toHaveURL(/\/hosts\/gpu-a\/units\//);
  await page.goBack();
  await expect(page.getByLabel("Filter units by state")).toHaveValue("failed");

  // clearing it brings back attention first and the folded hosts
  await page.getByLabel("Filter units by state").selectOption("all");
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByRole("heading", { name: "Needs attention" })).toBeVisible();
  await expect(page.getByTestId("host-card")).toHaveCount(3);
});
