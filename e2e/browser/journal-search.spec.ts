/**
 * The journal's filter bar on the demo (issue 24): priority and text narrow the lines and the
 * histogram appears; the URL holds the view, so "Copy link" reopens the same view in a new page.
 */
import { expect, revealLazySections, test } from "./fixtures";

const UNIT_PAGE = "/hosts/gpu-a/units/vllm-kimi-k25.service";

test("filter bar: text and priority narrow the journal, and the copied link reopens the same view", async ({ page, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.goto(UNIT_PAGE);
  // the journal loads when scrolled to (the unit page's JavaScript budget); its placeholder is
  // only there once the page has its data, so scroll again until it has come
  const journal = page.getByRole("region", { name: "Journal lines" });
  await expect(async () => {
    await revealLazySections(page);
    await expect(journal).toBeVisible({ timeout: 1_000 });
  }).toPass({ timeout: 30_000 });
  await expect(journal.getByTestId("journal-line").first()).toBeVisible();

  await page.getByTestId("journal-range").selectOption("24h");
  await page.getByTestId("journal-grep").fill("KIMI");
  await page.getByTestId("journal-grep").press("Enter");
  await expect(page).toHaveURL(/jq=KIMI/);
  await expect(page.getByTestId("journal-histogram")).toBeVisible();
  const lines = journal.getByTestId("journal-line");
  await expect(lines.first()).toBeVisible();
  for (const text of await lines.allInnerTexts()) expect(text.toLowerCase()).toContain("kimi");

  await page.getByTestId("journal-priority").selectOption("err");
  await expect(page).toHaveURL(/jprio=err/);

  await page.getByTestId("journal-copy-link").click();
  await expect(page.getByTestId("journal-notice")).toBeVisible();
  const link = await page.evaluate(() => navigator.clipboard.readText().catch(() => ""));
  const url = link.startsWith("http") ? link : ((await page.getByTestId("journal-notice").textContent()) ?? "");
  expect(url).toMatch(/jsince=\d+&juntil=\d+.*jprio=err.*jq=KIMI/);

  const again = await context.newPage();
  // the link opens the page with the journal drawn at once, not only when scrolled to
  await again.goto(url);
  await expect(again.getByRole("region", { name: "Journal lines" })).toBeVisible();
  await expect(again.getByTestId("journal-priority")).toHaveValue("err");
  await expect(again.getByTestId("journal-grep")).toHaveValue("KIMI");
  await expect(again.getByTestId("journal-range")).toHaveValue("custom");
  await expect(again.getByTestId("journal-histogram")).toBeVisible();
});
