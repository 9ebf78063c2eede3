import { expect, revealLazySections, test } from "./fixtures";

// The demo's gpu-b (healthy, simulated): the unit page asks units.timeline for the range shown
// at about its width in points (24 h when chosen, or prefetched while idle), and draws the telemetry lanes under the
// memory chart; the GPU page draws them per GPU.
const UNIT_PAGE = "/hosts/gpu-b/units/vllm-mistral-small.service";

test("the unit page fetches the range chosen at its width, and draws utilisation, power, temperature and SM clock lanes", async ({ page }) => {
  const timelineUrls: string[] = [];
  let dayBytes = 0;
  page.on("response", async (res) => {
    const url = decodeURIComponent(res.url());
    if (!url.includes("units.timeline")) return;
    timelineUrls.push(url);
    if (url.includes(`"points"`) && timelineUrls.length > 1) dayBytes = Math.max(dayBytes, (await res.body()).byteLength);
  });
  await page.goto(UNIT_PAGE);
  await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live");
  // the GPU chart and its lanes are drawn when scrolled to
  await revealLazySections(page);
  const lanes = page.getByTestId("unit-history").getByTestId("telemetry-lanes");
  await expect(lanes.getByText("SM clock (MHz)")).toBeVisible();
  await expect(lanes.getByRole("img", { name: /utilisation over time/ })).toBeVisible();
  await expect.poll(() => timelineUrls.some((u) => /"points":\d+/.test(u))).toBe(true);
  // the engine's latency under the readiness lane (the simulated vLLM exports its histograms)
  const engine = page.getByTestId("unit-history").getByTestId("engine-lanes");
  await expect(engine.getByText("time to first token (ms)")).toBeVisible({ timeout: 20_000 });
  await expect(engine.getByText(/p95 \d+/).first()).toBeVisible({ timeout: 20_000 });
  await page.locator('[aria-label="Time range"] button', { hasText: "24 h" }).click();
  const since = (u: string) => Number(/"sinceMs":(\d+)/.exec(u)?.[1]);
  // the day is asked for (prefetched while the page was idle, or when chosen) starting about a
  // day back; the page's first request started minutes back
  await expect.poll(() => timelineUrls.some((u) => Date.now() - since(u) > 23 * 3600_000)).toBe(true);
  expect(Date.now() - since(timelineUrls[0]!)).toBeLessThan(3600_000);
});

test("each GPU card draws the telemetry lanes; a value not reported says so", async ({ page }) => {
  await page.goto("/hosts/gpu-b/gpus");
  const card = page.getByTestId("gpu-card").first();
  await expect(card.getByTestId("telemetry-lanes").getByText("power (W)")).toBeVisible();
  await expect(card.getByText(/SM clock \d+ MHz of 1980/)).toBeVisible();
  await expect(card.getByRole("img", { name: /GPU \d+ SM clock over time/ })).toBeVisible();
});
