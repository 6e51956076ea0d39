// Playwright drives Debian's Chromium (never a downloaded browser) against
// a real `gatehouse serve` that each test starts (support/fixtures.ts).

import { defineConfig } from "@playwright/test";

/** The browser: Debian's package. */
export const CHROMIUM = process.env.CHROMIUM_BIN ?? "/usr/bin/chromium";

/** Flags for a quiet, headless, offline Chromium (Playwright gives each launch a fresh profile directory). */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export default defineConfig({
  testDir: "specs",
  globalSetup: "./global-setup.ts",
  timeout: 30_000,
  expect: { timeout: 5_000 },
  fullyParallel: true,
  workers: process.env.E2E_WORKERS ? Number(process.env.E2E_WORKERS) : 2,
  forbidOnly: true,
  retries: 0,
  reporter: [["list"]],
  outputDir: "test-results",
  use: {
    headless: true,
    launchOptions: { executablePath: CHROMIUM, args: CHROMIUM_ARGS },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
});
