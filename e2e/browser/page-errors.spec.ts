import { expect, HYDRATION_ERROR, test } from "./fixtures";

// The suite's own guard (./fixtures.ts): a page that throws, or logs a hydration error, fails its
// test even when every assertion passed. These pages are inline, so no server is involved.

test.describe("a page error fails the test", () => {
  test("an uncaught exception", async ({ page }) => {
    test.fail(true, "the fixture fails it on purpose");
    await page.setContent(`<p>ok</p><script>setTimeout(() => { throw new Error("boom on purpose"); }, 0)</script>`);
    await expect(page.getByText("ok")).toBeVisible();
    await page.waitForTimeout(200);
  });

  test("a console error of the hydration kind (React #418)", async ({ page }) => {
    test.fail(true, "the fixture fails it on purpose");
    await page.setContent(`<script>console.error("Uncaught Error: Minified React error #418; visit https://react.dev/errors/418")</script>`);
    await page.waitForTimeout(200);
  });
});

test.describe("what does not fail it", () => {
  test.use({ allowedPageErrors: [/expected in this test/] });

  test("an error the test allows, and console errors of another kind", async ({ page }) => {
    await page.setContent(`<script>console.error("Failed to load resource: 502"); setTimeout(() => { throw new Error("expected in this test"); }, 0)</script>`);
    await page.waitForTimeout(200);
    expect(HYDRATION_ERROR.test("Failed to load resource: 502")).toBe(false);
  });
});
