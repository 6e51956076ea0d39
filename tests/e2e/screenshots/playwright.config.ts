// The screenshots in docs/screenshots/, taken by Playwright: not part of
// `npm test`. Run from tests/e2e: `npx playwright test -c screenshots`.

import { defineConfig } from "@playwright/test";
import base from "../playwright.config";

export default defineConfig({
  ...base,
  testDir: ".",
  testMatch: "*.shots.ts",
  globalSetup: "../global-setup.ts",
  outputDir: "../test-results/screenshots",
  workers: 1,
  timeout: 120_000,
});
