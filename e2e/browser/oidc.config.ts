/** Playwright for e2e/browser/oidc.spec.ts alone: it starts its own provider and panel (on the built app). */
import { defineConfig, devices } from "@playwright/test";

const chromium = {
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
};

export default defineConfig({
  testDir: ".",
  testMatch: /oidc\.spec\.ts/,
  outputDir: "../../test-results/oidc",
  workers: 1,
  timeout: 180_000,
  expect: { timeout: 15_000 },
  reporter: [["list"]],
  use: { ...devices["Desktop Chrome"], launchOptions: chromium, trace: "retain-on-failure" },
});
