import { defineConfig, devices } from "@playwright/test";

const PORT = Number(process.env.E2E_PORT ?? 3100);
// a second panel with login required (auth.spec.ts): fresh data dir, users seeded by the CLI
const AUTH_PORT = Number(process.env.E2E_AUTH_PORT ?? 3101);

// Debian's chromium: Playwright cannot download its own browsers here.
const chromium = {
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
};

export default defineConfig({
  testDir: "e2e/browser",
  outputDir: "test-results",
  fullyParallel: false,
  workers: 1,
  retries: process.env.CI ? 1 : 0,
  timeout: 90_000,
  expect: { timeout: 15_000 },
  reporter: [["list"]],
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    launchOptions: chromium,
    trace: "retain-on-failure",
  },
  projects: [
    {
      name: "desktop",
      testIgnore: [/auth\.spec\.ts/, /real-systemd\.spec\.ts/, /oidc\.spec\.ts/],
      use: { ...devices["Desktop Chrome"], viewport: { width: 1366, height: 900 }, launchOptions: chromium },
    },
    {
      name: "phone",
      testIgnore: [/auth\.spec\.ts/, /real-systemd\.spec\.ts/, /oidc\.spec\.ts/],
      use: { ...devices["Pixel 7"], viewport: { width: 390, height: 844 }, launchOptions: chromium },
    },
    {
      name: "auth",
      testMatch: /auth\.spec\.ts/,
      use: { ...devices["Desktop Chrome"], viewport: { width: 1366, height: 900 }, launchOptions: chromium, baseURL: `http://127.0.0.1:${AUTH_PORT}` },
    },
    {
      // `npm start` mode on a real systemd (namespace sandbox, root only; skips loudly otherwise):
      // the spec boots the sandbox, the agent inside it and its own panel on a free port, and
      // navigates by absolute URL (the panel's port is only known once it runs). It serves the
      // build the demo webServer made: webServers start before any project.
      name: "real-systemd",
      testMatch: /real-systemd\.spec\.ts/,
      use: { ...devices["Desktop Chrome"], viewport: { width: 1366, height: 900 }, launchOptions: chromium },
    },
  ],
  webServer: [
    {
      // the real built app in demo mode (three simulated hosts); the simulator runs twice as fast
      // to keep the suite short. Both projects replay the same restarts on gpu-a within a
      // minute: a 10 s action-guard window keeps the second from needing a confirmation. gpu-c's
      // agent goes away for 12 s every 20 s, so a test sees a host go down and come back (the
      // other tests act on gpu-a and gpu-b).
      command: "npm run demo",
      url: `http://127.0.0.1:${PORT}/`,
      env: {
        PORT: String(PORT),
        GPUDECK_SIM_SPEED: "2",
        // a killed process's memory drains in ~22 s (45 simulated): the incident's tests look at it
        // held, and on a busy machine the page needs longer than the default ~15 s to get there
        GPUDECK_SIM_DRAIN_S: "45",
        GPUDECK_DATA_DIR: ".data/e2e",
        GPUDECK_ACTION_GUARD_SECONDS: "10",
        GPUDECK_DEMO_FLAKY_UP_S: "20",
        GPUDECK_DEMO_FLAKY_DOWN_S: "12",
      },
      timeout: 240_000,
      reuseExistingServer: false,
      stdout: "pipe",
      stderr: "pipe",
    },
    {
      // login required: agent + panel (built above), data dir seeded through `npm run user`
      command: "node --import tsx e2e/browser/authServer.ts",
      url: `http://127.0.0.1:${AUTH_PORT}/login`,
      env: { E2E_AUTH_PORT: String(AUTH_PORT), GPUDECK_SIM_SPEED: "4" },
      timeout: 240_000,
      reuseExistingServer: false,
      stdout: "pipe",
      stderr: "pipe",
    },
  ],
});
