/**
 * The browser suite's `test`: Playwright's, with every page of the test's context watched for
 * page errors (an uncaught exception) and console errors of the hydration kind (React #418–#425,
 * "Hydration failed", "server-rendered HTML"). Any one fails the test when it ends, with the page's URL
 * and the message, even though every assertion passed: a page that threw while it looked right
 * (the overview's React #418 on one first load) is a bug. Specs import `test` and `expect` from
 * here, not from "@playwright/test".
 *
 * A test that provokes an error on purpose says which: `test.use({ allowedPageErrors: [/…/] })`.
 */
import { expect, test as base, type BrowserContext, type ConsoleMessage, type Page } from "@playwright/test";

export { expect } from "@playwright/test";
export type { Locator, Page } from "@playwright/test";

/** React's production hydration errors (#418 text, #419–#425) and their development wording. */
export const HYDRATION_ERROR = /Minified React error #4(1[89]|2[0-5])\b|react\.dev\/errors\/4(1[89]|2[0-5])\b|hydrat|server-rendered HTML/i;

export interface PageErrorRecord {
  kind: "pageerror" | "console";
  url: string;
  message: string;
}

/** Which console messages count: errors of the hydration kind (a failed fetch's log line does not). */
export function isHydrationConsoleError(msg: Pick<ConsoleMessage, "type" | "text">): boolean {
  return msg.type() === "error" && HYDRATION_ERROR.test(msg.text());
}

/** Records what the context's pages (those open now and those opened later) throw or log. */
export function watchPageErrors(context: BrowserContext): PageErrorRecord[] {
  const seen: PageErrorRecord[] = [];
  context.on("weberror", (e) => {
    const page = e.page();
    seen.push({ kind: "pageerror", url: page?.url() ?? "?", message: e.error().stack ?? e.error().message });
  });
  context.on("console", (msg) => {
    if (isHydrationConsoleError(msg)) seen.push({ kind: "console", url: msg.page()?.url() ?? "?", message: msg.text() });
  });
  return seen;
}

export const test = base.extend<{ allowedPageErrors: RegExp[]; failOnPageErrors: void }>({
  allowedPageErrors: [[], { option: true }],
  failOnPageErrors: [
    async ({ context, allowedPageErrors }, use, testInfo) => {
      const seen = watchPageErrors(context);
      await use();
      const unexpected = seen.filter((e) => !allowedPageErrors.some((re) => re.test(e.message)));
      if (unexpected.length > 0) {
        await testInfo.attach("page-errors", { body: JSON.stringify(unexpected, null, 2), contentType: "application/json" });
        throw new Error(
          `${unexpected.length} page error(s) during the test:\n` +
            unexpected.map((e) => `- ${e.kind} on ${e.url}:\n  ${e.message.split("\n").slice(0, 4).join("\n  ")}`).join("\n"),
        );
      }
    },
    { auto: true },
  ],
});

/**
 * Scrolls to each part of the page that is drawn only when scrolled near (components/WhenVisible.tsx:
 * the unit page's engine, facts and journal) until none is left waiting, as a reader scrolling
 * down would. A test that looks at one of them calls this first.
 */
export async function revealLazySections(page: Page): Promise<void> {
  const pending = page.locator('[data-lazy="pending"]');
  await expect
    .poll(
      async () => {
        const n = await pending.count();
        if (n > 0)
          await pending
            .first()
            .scrollIntoViewIfNeeded({ timeout: 2_000 })
            .catch(() => {});
        return n;
      },
      { message: "lazily drawn sections still waiting", intervals: [100, 250, 500] },
    )
    .toBe(0);
}
