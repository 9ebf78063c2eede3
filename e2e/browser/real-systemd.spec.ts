/**
 * The panel in `npm start` mode on a real host: a real systemd 252 (namespace sandbox), the real
 * agent inside it, the real panel with login. A browser signs in, sees the real unit with its
 * real state, starts it and watches `activating (start-pre)` turn into `active (running)` live,
 * with the timeline and systemd's own journal lines; then stops it. What the page shows is
 * compared with what systemd itself says (`systemctl show` inside the sandbox).
 * Needs root (namespaces); skips loudly otherwise. Project "real-systemd" (playwright.config.ts).
 */
import { expect, revealLazySections, test, type Page } from "./fixtures";
import { warnIfUnsupported } from "../sandbox/sandbox";
import { REAL_HOST, REAL_PASSWORD, REAL_UNIT, REAL_UNIT_DESCRIPTION, START_PRE_SECONDS, startRealSystemdHost, type RealSystemdHost } from "./realSystemdHost";

const unsupported = warnIfUnsupported("the real-systemd browser test (e2e/browser/real-systemd.spec.ts)");

test.describe.configure({ mode: "serial" });

const shot = (page: Page, name: string) => page.screenshot({ path: `test-results/screenshots/real-systemd-${name}.png`, fullPage: true });

type BadgeStep = { state: string; atMs: number };

/** Record every state the unit page's header badge shows, in order, with the browser's clock. */
async function recordBadge(page: Page): Promise<void> {
  await page.evaluate(() => {
    const steps: BadgeStep[] = [];
    (window as unknown as { __badgeSteps: BadgeStep[] }).__badgeSteps = steps;
    const read = () => {
      const state = document.querySelector('h1 + [data-testid="state-badge"]')?.getAttribute("data-state");
      if (state && steps.at(-1)?.state !== state) steps.push({ state, atMs: performance.now() });
    };
    read();
    new MutationObserver(read).observe(document.body, {
      subtree: true,
      childList: true,
      characterData: true,
      attributes: true,
      attributeFilter: ["data-state"],
    });
  });
}

const badgeSteps = (page: Page) => page.evaluate(() => (window as unknown as { __badgeSteps: BadgeStep[] }).__badgeSteps);

test.describe("npm start mode on a real systemd", () => {
  test.skip(unsupported, "the real-systemd sandbox needs root and cgroup2 (see the banner above)");

  let host: RealSystemdHost;

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    const t0 = Date.now();
    host = await startRealSystemdHost();
    console.log(
      `[real-systemd] sandbox ${host.sandbox.name} (systemd host pid ${host.sandbox.pid}) + agent + panel ready in ${Date.now() - t0} ms at ${host.panelUrl}`,
    );
  });

  test.afterAll(async () => {
    const t0 = Date.now();
    await host?.stop();
    console.log(`[real-systemd] stopped in ${Date.now() - t0} ms`);
  });

  test("a browser sees a real unit go activating (start-pre) → active (running), then stops it", async ({ page }) => {
    const at = (p: string) => new URL(p, host.panelUrl).href;
    const unitRow = page.locator(`[data-testid="unit-row"][data-unit="${REAL_UNIT}"]`);

    await test.step("sign in; the overview shows the host's real unit as systemd has it: inactive (dead)", async () => {
      await page.goto(at("/"));
      await expect(page).toHaveURL(at("/login"));
      await page.getByLabel("User name").fill("opal");
      await page.getByLabel("Password").fill(REAL_PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect(page).toHaveURL(at("/"));
      await expect(page.getByTestId("user-name")).toHaveText("opal");
      await expect(page.getByTestId("demo-banner")).toHaveCount(0);
      await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live");
      // only what GPUDECK_UNITS allows: the sandbox's dbus/journald units are not listed
      await expect(page.getByTestId("unit-row")).toHaveCount(1);
      await expect(unitRow.getByTestId("state-badge")).toHaveText("inactive (dead)");
      await expect(unitRow).toContainText(REAL_UNIT_DESCRIPTION);
      await expect(unitRow).toHaveAttribute("data-host", REAL_HOST);
      await expect(page.locator(`[data-testid="host-card"][data-host="${REAL_HOST}"]`).getByTestId("host-state")).toHaveText("connected");
      expect(await host.showUnit(["ActiveState", "SubState"])).toEqual({ ActiveState: "inactive", SubState: "dead" });
      await shot(page, "overview");
    });

    const badge = page.locator('h1 + [data-testid="state-badge"]');
    const unitPath = `/hosts/${REAL_HOST}/units/${REAL_UNIT}`;
    await test.step("the unit page (the single-host panel's link leads there) shows systemd's facts about it", async () => {
      await expect(unitRow.getByRole("link")).toHaveAttribute("href", unitPath);
      await page.goto(at(`/units/${REAL_UNIT}`));
      await expect(page).toHaveURL(at(unitPath));
      await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live");
      await expect(page.getByRole("heading", { level: 1 })).toHaveText(REAL_UNIT);
      await expect(badge).toHaveText("inactive (dead)");
      await revealLazySections(page);
      const facts = page.getByRole("region", { name: "Unit facts" });
      await expect(facts).toContainText(`/bin/sleep ${START_PRE_SECONDS}`);
      await expect(facts).toContainText("/bin/sleep infinity");
      await expect(facts).toContainText(`/etc/systemd/system/${REAL_UNIT}`);
      const { LoadState, UnitFileState } = await host.showUnit(["LoadState", "UnitFileState"]);
      await expect(facts).toContainText(`${LoadState} / ${UnitFileState}`); // "loaded / static": no [Install]
      // a 3 s segment is a few pixels in 15 min: zoom in (the view keeps following now)
      for (let i = 0; i < 3; i++) await page.getByRole("button", { name: "Zoom in" }).click();
    });

    const startMark = host.agent.mark();
    await test.step("Start: the badge goes activating (start-pre), showing the ExecStartPre as the control process", async () => {
      await recordBadge(page);
      await page.getByRole("group", { name: "Unit actions" }).getByRole("button", { name: "Start", exact: true }).click();
      await expect(page.getByTestId("job-progress")).toContainText(/Job #\d+ \(start\)/);
      await expect(badge).toHaveText("activating (start-pre)", { timeout: 5_000 });
      // the control process's command line, read from /proc inside the host
      await expect(page.getByRole("region", { name: "Unit facts" })).toContainText(new RegExp(`PID \\d+: /bin/sleep ${START_PRE_SECONDS}`));
      await shot(page, "start-pre");
    });

    await test.step("… then active (running) live, with both segments on the timeline and systemd's journal lines", async () => {
      await expect(badge).toHaveText("active (running)", { timeout: START_PRE_SECONDS * 1000 + 10_000 });
      await expect(page.getByTestId("job-progress")).toContainText(/Job #\d+ \(start\) finished: done/);
      const steps = await badgeSteps(page);
      expect(steps.map((s) => s.state)).toEqual(["inactive/dead", "activating/start-pre", "active/running"]);
      // start-pre stayed on screen about as long as the ExecStartPre slept
      const preMs = steps[2]!.atMs - steps[1]!.atMs;
      expect(preMs).toBeGreaterThan(START_PRE_SECONDS * 1000 - 1000);
      expect(preMs).toBeLessThan(START_PRE_SECONDS * 1000 + 3000);

      const states = page.getByRole("list", { name: "States in view" });
      await expect(states.getByRole("listitem", { name: /^activating \(start-pre\) from / })).toHaveCount(1);
      await expect(states.getByRole("listitem", { name: /^active \(running\) from .* to now/ })).toHaveCount(1);

      // systemd 252 writes "<verb> <unit> - <description>"
      await revealLazySections(page);
      const journal = page.getByTestId("journal");
      await expect(journal).toContainText(`Starting ${REAL_UNIT} - ${REAL_UNIT_DESCRIPTION}...`);
      await expect(journal).toContainText(`Started ${REAL_UNIT} - ${REAL_UNIT_DESCRIPTION}.`);

      // the page and systemd agree, down to the main PID (the sandbox's own PID numbers)
      const shown = await host.showUnit(["ActiveState", "SubState", "MainPID"]);
      expect(shown).toMatchObject({ ActiveState: "active", SubState: "running" });
      await expect(page.getByRole("region", { name: "Unit facts" })).toContainText(new RegExp(`Main PID\\s*${shown.MainPID}(?!\\d)`));
      expect(host.agent.sequence(REAL_UNIT, startMark)).toEqual(["inactive/dead → activating/start-pre", "activating/start-pre → active/running"]);
      await shot(page, "running");
    });

    await test.step("Stop (confirmed in the dialog): inactive (dead) again", async () => {
      const stopMark = host.agent.mark();
      await page.getByRole("group", { name: "Unit actions" }).getByRole("button", { name: "Stop", exact: true }).click();
      const dialog = page.getByRole("dialog");
      await expect(dialog).toContainText(`${REAL_UNIT} is active (running)`);
      await dialog.getByLabel(/Reason/).fill("e2e: stop the real unit");
      await dialog.getByRole("button", { name: `Stop ${REAL_UNIT}` }).click();
      await expect(dialog).toBeHidden();
      await expect(badge).toHaveText("inactive (dead)");
      await expect(page.getByTestId("job-progress")).toContainText(/Job #\d+ \(stop\) finished: done/);
      const journal = page.getByTestId("journal");
      await expect(journal).toContainText(`Stopping ${REAL_UNIT} - ${REAL_UNIT_DESCRIPTION}...`);
      await expect(journal).toContainText(`Stopped ${REAL_UNIT} - ${REAL_UNIT_DESCRIPTION}.`);
      expect(await host.showUnit(["ActiveState", "SubState"])).toEqual({ ActiveState: "inactive", SubState: "dead" });
      expect((await badgeSteps(page)).map((s) => s.state).at(-1)).toBe("inactive/dead");
      expect(host.agent.sequence(REAL_UNIT, stopMark)).toEqual(["active/running → deactivating/stop-sigterm", "deactivating/stop-sigterm → inactive/dead"]);
      await shot(page, "stopped");
    });

    await test.step("the agent restarts while someone starts the unit by hand: the page keeps its history and marks the span no agent watched", async () => {
      await host.restartAgent(async () => {
        // the page says it lost the live feed rather than showing a frozen picture as current
        await expect(page.getByTestId("connection")).not.toHaveAttribute("data-state", "live");
        await host.sandbox.systemctl(["start", REAL_UNIT]); // waits out the ExecStartPre
      });
      await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live", { timeout: 20_000 });
      await expect(badge).toHaveText("active (running)");
      expect(await host.showUnit(["ActiveState", "SubState"])).toEqual({ ActiveState: "active", SubState: "running" });
      const gaps = page.getByRole("list", { name: "Times no agent was running, in view" }).getByRole("listitem");
      await expect(gaps).toHaveCount(1);
      await expect(gaps.first()).toHaveAttribute("aria-label", /^Agent not running .+ – .+ \(.+\): states rebuilt from systemd's timestamps/);
      // what the first agent saw is still there, with the action and its reason
      const states = page.getByRole("list", { name: "States in view" });
      await expect(states.getByRole("listitem", { name: /^activating \(start-pre\) from / })).toHaveCount(1);
      await expect(states.getByRole("listitem", { name: /^active \(running\) from .* to now/ })).toHaveCount(1);
      await expect(page.getByRole("list", { name: "Actions in view" }).getByRole("listitem", { name: /e2e: stop the real unit/ })).toHaveCount(1);
      // the journal resumes after its last line: the start done by hand is there, once
      const started = page.getByTestId("journal-line").filter({ hasText: `Started ${REAL_UNIT} - ${REAL_UNIT_DESCRIPTION}.` });
      await expect(started).toHaveCount(2, { timeout: 20_000 });
      await expect(page.getByTestId("journal")).not.toContainText("stream interrupted");
      await shot(page, "after-agent-restart");
    });
  });
});
