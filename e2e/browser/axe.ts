/**
 * axe-core's WCAG 2.0/2.1 A and AA rules on the open page, in light and dark colour schemes, for
 * accessibility.spec.ts (demo) and accessibility.auth.spec.ts (signed in). AxeBuilder injects the
 * engine through Playwright's evaluate path, which a page's CSP does not govern: the status page
 * keeps its own strict CSP (no script without its nonce).
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, revealLazySections, test, type Page } from "./fixtures";

export const WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];
export const SCHEMES = ["light", "dark"] as const;
export type Scheme = (typeof SCHEMES)[number];

/**
 * A page is ready to check once it shows its data: the live ones (overview, hosts, a host and its
 * units, see components/live/scope.ts) connected, and no "Loading…" left on any.
 */
export async function waitReady(page: Page, route: string): Promise<void> {
  if (route === "/" || route.startsWith("/hosts")) await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live");
  await expect(page.getByText("Loading…", { exact: true })).toHaveCount(0);
  // the parts drawn when scrolled to are checked too
  if (route.includes("/units/")) {
    await revealLazySections(page);
    await page.evaluate(() => window.scrollTo(0, 0));
  }
  await page.waitForTimeout(300); // charts measure their width after the first paint
}

type AxeResults = Awaited<ReturnType<AxeBuilder["analyze"]>>;
type Violation = AxeResults["violations"][number];
type CheckData = { fgColor?: string; bgColor?: string; contrastRatio?: number; expectedContrastRatio?: string; fontSize?: string; fontWeight?: string };

/** One line per failing element: where, and for contrast the colours and the ratio found and needed. */
export function describeViolation(v: Violation): string {
  const nodes = v.nodes.map((n) => {
    const data = n.any.map((c) => c.data as CheckData | null).find((d) => d && d.contrastRatio !== undefined);
    const contrast = data
      ? ` — ${data.fgColor} on ${data.bgColor}: ${data.contrastRatio}:1, needs ${data.expectedContrastRatio} (${data.fontSize}, ${data.fontWeight})`
      : "";
    return `    ${n.target.join(" ")}${contrast}\n      ${n.html.slice(0, 160)}`;
  });
  return `  ${v.id} (${v.impact}): ${v.help} — ${v.nodes.length} element(s)\n${nodes.join("\n")}`;
}

/**
 * Runs the rules in both schemes on the loaded page (no reload: the page's dark styles follow the
 * media query) and fails naming every violation. Wait for what the page must show before calling it;
 * `include`/`exclude` narrow it to part of the page (CSS selectors).
 */
export async function expectAccessible(page: Page, what: string, opts: { include?: string; exclude?: string[] } = {}): Promise<void> {
  const width = page.viewportSize()?.width;
  const report: string[] = [];
  let count = 0;
  for (const colorScheme of SCHEMES) {
    await page.emulateMedia({ colorScheme });
    let builder = new AxeBuilder({ page }).withTags(WCAG_21_AA);
    if (opts.include) builder = builder.include(opts.include);
    for (const e of opts.exclude ?? []) builder = builder.exclude(e);
    const { violations } = await builder.analyze();
    const elements = violations.reduce((n, v) => n + v.nodes.length, 0);
    count += elements;
    // the numbers for the record (the suite's output), failing or not
    console.log(`[axe] ${test.info().project.name} ${what} ${colorScheme} ${width}px: ${violations.length} rule(s), ${elements} element(s)`);
    if (violations.length) report.push(`${what} in ${colorScheme} at ${width}px:\n${violations.map(describeViolation).join("\n")}`);
  }
  await page.emulateMedia({ colorScheme: null });
  // soft: a test that walks several pages reports them all
  expect.soft(count, `WCAG 2.1 AA violations:\n${report.join("\n")}`).toBe(0);
}
