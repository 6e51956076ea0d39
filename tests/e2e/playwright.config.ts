// Playwright drives Debian's Chromium (never a downloaded browser) against
// a real `gatehouse serve` that each test starts (support/fixtures.ts).

import { defineConfig } from "@playwright/test";
import { CHROMIUM, CHROMIUM_ARGS } from "./support/chromium.mjs";

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
