import { expect, test, type Locator, type Page } from "./fixtures";
import { expectAccessible } from "./axe";

// The incident walked with the keyboard alone on the demo's gpu-a (page.keyboard only, no clicks):
// from the overview, filter to the unit and open it, kill it, open
// the restart dialog, choose "Restart when its GPUs are free", watch the steps, cancel, then start
// it again (the specs after this one, and the phone project, expect it running). At every key the
// focused element shows a ring, and focus never falls to the page's body; the dialogs keep Tab
// inside and give focus back; what changes is told through polite live regions, not per GPU
// sample; axe's WCAG 2.1 AA rules pass on the dialogs and on the operation's status box in its
// waiting and canceled states (light and dark). Desktop only: the walk is the same on a phone, and it takes the unit down for a minute.
// Named to run after the other specs that act on Kimi.
test.describe.configure({ mode: "serial" });

const KIMI = "vllm-kimi-k25.service";
const KIMI_PAGE = `/hosts/gpu-a/units/${KIMI}`;

type Focused = { tag: string; text: string; body: boolean; ring: boolean; inDialog: boolean; outline: string; shadow: string };

/** What has focus, and whether it is drawn visibly (an outline or a ring of box-shadow). */
function focused(page: Page): Promise<Focused> {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return { tag: "body", text: "", body: true, ring: false, inDialog: false, outline: "", shadow: "" };
    const s = getComputedStyle(el);
    const outline = s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0;
    const shadow = s.boxShadow !== "none" && s.boxShadow !== "";
    return {
      tag: el.tagName.toLowerCase(),
      text: (el.getAttribute("aria-label") || el.textContent || "").trim().slice(0, 80),
      body: false,
      ring: outline || shadow,
      inDialog: !!el.closest("dialog[open]"),
      outline: `${s.outlineStyle} ${s.outlineWidth} ${s.outlineColor}`,
      shadow: s.boxShadow,
    };
  });
}

async function expectFocusVisible(page: Page, step: string): Promise<Focused> {
  const f = await focused(page);
  expect(f.body, `${step}: focus fell to the page's body`).toBe(false);
  expect(f.ring, `${step}: the focused ${f.tag} "${f.text}" shows no ring (outline ${f.outline}, box-shadow ${f.shadow})`).toBe(true);
  return f;
}

/** Press Tab (or Shift+Tab) until `target` has focus, checking the ring at every stop. */
async function tabTo(page: Page, target: Locator, what: string, back = false, max = 80): Promise<void> {
  for (let i = 0; i < max; i++) {
    if (await target.evaluate((el) => el === document.activeElement).catch(() => false)) return;
    await page.keyboard.press(back ? "Shift+Tab" : "Tab");
    await expectFocusVisible(page, `tabbing to ${what} (${i + 1})`);
  }
  throw new Error(`${what} was not reached in ${max} presses of ${back ? "Shift+Tab" : "Tab"}`);
}

/** Tab and Shift+Tab go round the open dialog's controls and never leave it. */
async function expectTrapped(page: Page, dialog: Locator, what: string): Promise<void> {
  const count = await dialog.evaluate(
    (d) =>
      [...d.querySelectorAll<HTMLElement>("button, input, [href], select, textarea")].filter(
        (e) => !(e as HTMLButtonElement).disabled && e.getClientRects().length,
      ).length,
  );
  expect(count, `${what}: controls`).toBeGreaterThan(1);
  // onto a control first (the dialog itself may hold focus when it opens)
  await page.keyboard.press("Tab");
  const start = (await expectFocusVisible(page, `${what}: first Tab`)).text;
  for (const key of ["Tab", "Shift+Tab"]) {
    for (let i = 0; i < count; i++) {
      await page.keyboard.press(key);
      const f = await expectFocusVisible(page, `${what}: ${key} ${i + 1}`);
      expect(f.inDialog, `${what}: ${key} ${i + 1} left the dialog for ${f.tag} "${f.text}"`).toBe(true);
    }
    // once round: back where it began
    expect((await focused(page)).text, `${what}: ${key} ×${count} comes back round`).toBe(start);
  }
}

test("the incident with the keyboard alone: kill, restart when its GPUs are free, watch, cancel", async ({ page }) => {
  test.skip(test.info().project.name !== "desktop", "desktop only (see the top of the file)");
  test.setTimeout(150_000);
  // open the unit from the overview: its filter box, then the unit's link
  await page.goto("/");
  await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live");
  const filter = page.getByRole("searchbox", { name: "Filter units by name" });
  await tabTo(page, filter, "the overview's filter");
  await page.keyboard.type("kimi");
  const kimiLink = page.locator(`[data-testid="unit-row"][data-host="gpu-a"][data-unit="${KIMI}"] a`);
  await expect(kimiLink).toBeVisible();
  await tabTo(page, kimiLink, "the Kimi unit's link");
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(new RegExp(`${KIMI_PAGE.replace(/\./g, "\\.")}$`));
  await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "live");
  await expect(page.getByTestId("state-badge").first()).toHaveText("active (running)", { timeout: 60_000 });
  const actions = page.getByRole("group", { name: "Unit actions" });
  const killButton = actions.getByRole("button", { name: "Kill (SIGKILL)", exact: true });

  // open the Kill dialog from the keyboard: it traps Tab, Escape gives focus back to its button
  await tabTo(page, killButton, "the Kill button");
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog");
  await expect(dialog).toContainText(KIMI);
  await expectFocusVisible(page, "the Kill dialog opened");
  expect((await focused(page)).inDialog, "the Kill dialog takes focus").toBe(true);
  await expectTrapped(page, dialog, "the Kill dialog");
  await expectAccessible(page, "the Kill dialog", { include: "dialog[open]" });
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await expect(killButton).toBeFocused();
  await expectFocusVisible(page, "the Kill dialog canceled");

  // kill: its button goes once the unit is dead, and focus must not go with it
  await page.keyboard.press("Enter");
  await expect(dialog).toBeVisible();
  await tabTo(page, dialog.getByRole("button", { name: `Kill (SIGKILL) ${KIMI}` }), "Kill's confirm");
  await page.keyboard.press("Enter");
  await expect(dialog).toBeHidden();
  await expectFocusVisible(page, "killed");
  await expect(page.getByTestId("state-badge").first()).toHaveText("failed (failed)");
  await expect(killButton).toHaveCount(0);
  await expect.poll(async () => (await focused(page)).body, { message: "focus lost after Kill" }).toBe(false);
  await expectFocusVisible(page, "the Kill button gone");

  // the restart dialog, on its GPU-aware choice
  const restartButton = actions.getByRole("button", { name: "Restart", exact: true });
  await tabTo(page, restartButton, "the Restart button", true);
  await page.keyboard.press("Enter");
  await expect(dialog.getByTestId("gpu-wait")).toContainText("Restart when its GPUs are free");
  await expectFocusVisible(page, "the restart dialog opened");
  expect((await focused(page)).inDialog, "the restart dialog takes focus").toBe(true);
  await expectTrapped(page, dialog, "the restart dialog");
  // Escape gives focus back to Restart; Enter opens it again
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await expect(restartButton).toBeFocused();
  await expectFocusVisible(page, "the restart dialog canceled");
  await page.keyboard.press("Enter");
  await expect(dialog.getByTestId("gpu-wait")).toContainText("Restart when its GPUs are free");
  await tabTo(page, dialog.getByRole("button", { name: "Restart when its GPUs are free" }), "Restart when its GPUs are free", true, 6);
  await page.keyboard.press("Enter");
  await expect(dialog).toBeHidden();
  await expectFocusVisible(page, "restart when its GPUs are free chosen");

  // watch the steps: the GPU samples come (the memory drains), the live regions stay quiet
  const op = page.getByTestId("operation");
  await expect(op).toHaveAttribute("data-step", "waiting-for-gpus", { timeout: 10_000 });
  const announcement = op.getByTestId("operation-announcement");
  await expect(announcement).toHaveAttribute("aria-live", "polite");
  await expect(announcement).toHaveText(/^waiting for its GPUs: /);
  await expect.poll(async () => (await focused(page)).body, { message: "focus lost when the operation began" }).toBe(false);
  const watched = await page.evaluate(async () => {
    const live = (n: Node | null) =>
      (n instanceof Element ? n : n?.parentElement)?.closest(
        '[aria-live]:not([aria-live="off"]), [role="status"], [role="alert"], [role="log"], [role="timer"]',
      );
    const held = new Set<string>();
    const updates: string[] = [];
    const observer = new MutationObserver((records) => {
      for (const r of records) {
        if (r.type === "attributes") {
          const v = (r.target as Element).getAttribute("data-held-mib");
          if (v) held.add(v);
        } else if (live(r.target)) {
          updates.push(((live(r.target) as HTMLElement).textContent ?? "").slice(0, 80));
        }
      }
    });
    observer.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ["data-held-mib"] });
    await new Promise((r) => setTimeout(r, 4000));
    observer.disconnect();
    return { samples: held.size, updates };
  });
  // samples came (the held memory changed) but a screen reader heard at most the step changes
  expect(watched.samples, "GPU samples while watching").toBeGreaterThanOrEqual(2);
  expect(watched.updates.length, `live-region updates in 4 s of ${watched.samples} GPU samples: ${watched.updates.join(" | ")}`).toBeLessThanOrEqual(2);
  await expectFocusVisible(page, "watching");
  await expectAccessible(page, "the operation waiting for its GPUs", { include: '[data-testid="operation"]' });

  // cancel: its button goes, focus stays in the status box
  const cancel = op.getByRole("button", { name: /^Cancel/ });
  await tabTo(page, cancel, "Cancel");
  await page.keyboard.press("Enter");
  await expect(op).toHaveAttribute("data-step", "canceled", { timeout: 10_000 });
  await expect(cancel).toHaveCount(0);
  await expect.poll(async () => (await focused(page)).body, { message: "focus lost after Cancel" }).toBe(false);
  await expectFocusVisible(page, "canceled");
  await expect(announcement).toHaveText(/^canceled: /);
  await expectAccessible(page, "the operation canceled", { include: '[data-testid="operation"]' });

  // leave it running for the specs after this one
  const start = actions.getByRole("button", { name: "Start", exact: true });
  await tabTo(page, start, "the Start button", true);
  await page.keyboard.press("Enter");
  await expectFocusVisible(page, "started");
  await expect(page.getByTestId("state-badge").first()).toHaveText("active (running)", { timeout: 60_000 });
});
