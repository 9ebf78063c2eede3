/** Headless chromium for the browser benches: Debian's, with the flags playwright.config.ts uses. */
import { chromium, type Browser } from "@playwright/test";

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}
