/**
 * Single sign-on in a browser: a real OpenID provider (oidc-provider, started here) and a panel
 * built for it (login required, [panel.oidc] from the environment); the person signs in through
 * the provider's own login page and lands signed in where they were going; someone in no group
 * lands on the sign-in page with the reason. Run: npx playwright test -c e2e/browser/oidc.config.ts
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "./fixtures";
import { startTestProvider, type TestProvider } from "../../server/auth/oidc/testing/provider";

const PORT = Number(process.env.E2E_OIDC_PORT ?? 3102);
const PANEL = `http://127.0.0.1:${PORT}`;
let idp: TestProvider;
let panel: ChildProcess;
let dataDir: string;

test.beforeAll(async () => {
  idp = await startTestProvider({
    redirectUris: [`${PANEL}/api/auth/oidc/callback`],
    postLogoutRedirectUris: [`${PANEL}/login`],
    people: [
      { sub: "sub-ada", preferred_username: "ada", groups: ["ml-platform"] },
      { sub: "sub-eve", preferred_username: "eve", groups: ["marketing"] },
    ],
  });
  dataDir = mkdtempSync(path.join(tmpdir(), "gpudeck-e2e-oidc-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GPUDECK_DATA_DIR: dataDir,
    GPUDECK_PUBLIC_URL: PANEL,
    GPUDECK_AGENT_URL: "http://127.0.0.1:9",
    GPUDECK_AGENT_TOKEN: "e2e-oidc-agent-token-0123456789abcdefghijkl",
    GPUDECK_OIDC_ISSUER: idp.issuer,
    GPUDECK_OIDC_CLIENT_ID: idp.clientId,
    GPUDECK_OIDC_CLIENT_SECRET: idp.clientSecret,
    GPUDECK_OIDC_NAME: "Test IdP",
    GPUDECK_OIDC_ROLES: JSON.stringify([{ group: "ml-platform", role: "admin" }]),
    HOSTNAME: "127.0.0.1",
    PORT: String(PORT),
    NEXT_TELEMETRY_DISABLED: "1",
  };
  delete env.GPUDECK_DEMO;
  panel = spawn(process.execPath, ["--import", "tsx", "server/panel/serve.ts"], { env, stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the panel did not start")), 120_000);
    panel.stdout!.on("data", (chunk: Buffer) => {
      if (/\[panel\] ready on/.test(chunk.toString())) {
        clearTimeout(timer);
        resolve();
      }
    });
    panel.once("exit", (code) => reject(new Error(`the panel exited (${code})`)));
  });
});

test.afterAll(async () => {
  panel?.kill("SIGTERM");
  await idp?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test("signs in through the provider's real login page and lands where it was going; signs out at the provider too", async ({ page }) => {
  await page.goto(`${PANEL}/audit`);
  await expect(page).toHaveURL(/\/login\?next=%2Faudit$/);
  await page.getByRole("button", { name: /^Sign in with Test IdP/ }).click();
  await expect(page).toHaveURL(new RegExp(`^${idp.issuer}/interaction/`));
  await page.locator('input[name="login"]').fill("ada");
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await expect(page).toHaveURL(`${PANEL}/audit`);
  await expect(page.getByTestId("user-name")).toHaveText("ada");
  await page.getByTestId("user-name").click();
  // the provider is told whose session to end: the ID token, kept on the panel's server, as the hint
  const endSession = page.waitForRequest((r) => r.url().startsWith(`${idp.issuer}/`) && r.isNavigationRequest());
  await page.getByRole("button", { name: "Sign out" }).click();
  expect(new URL((await endSession).url()).searchParams.get("id_token_hint")).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  await expect(page).toHaveURL(new RegExp(`^${idp.issuer}/`));
});

test("someone in no matching group lands on the sign-in page with the reason", async ({ page }) => {
  await page.goto(`${PANEL}/login`);
  await page.getByRole("button", { name: /^Sign in with Test IdP/ }).click();
  await page.locator('input[name="login"]').fill("eve");
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await expect(page).toHaveURL(`${PANEL}/login?error=no-group`);
  await expect(page.getByTestId("sso-error")).toContainText("You are not in any group that may use gpudeck");
});
