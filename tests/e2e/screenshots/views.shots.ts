// Screenshots of every view of the reviewer's desk at 1440×900, light and
// dark, written to docs/screenshots/VIEW-THEME.png for the README. Run from
// tests/e2e: `npx playwright test -c screenshots` (after building the UI).

import { fileURLToPath } from "node:url";
import type { Page } from "@playwright/test";
import { buildScene } from "../support/scene";
import { teamAtReview } from "../support/team";
import { expect, signIn, test } from "../support/fixtures";

const OUT = fileURLToPath(new URL("../../../docs/screenshots/", import.meta.url));

test.use({ viewport: { width: 1440, height: 900 } });

for (const theme of ["light", "dark"] as const) {
  test(`every view, ${theme}`, async ({ page, gatehouse }) => {
    await page.emulateMedia({ colorScheme: theme });
    const scene = await buildScene(gatehouse);
    await signIn(page, gatehouse, scene.reviewer);
    const shot = async (name: string) => {
      await page.mouse.move(0, 0);
      await page.screenshot({ path: `${OUT}${name}-${theme}.png` });
    };
    const preview = page.getByTestId("gate-preview-pane");
    await expect(preview.getByTestId("preview-text")).toBeVisible();
    await expect(page.locator("html")).toHaveAttribute("data-theme", theme);
    await shot("desk");

    await page.keyboard.press("Enter");
    await expect(page.getByTestId("resolution-modal")).toBeVisible();
    await shot("gate");
    await page.keyboard.press("Escape");

    await view(page, "2", "runs-view");
    await page.getByTestId("run-list").locator(`[data-run-id="${scene.runId}"]`).click();
    await expect(page.getByTestId("run-plan")).toBeVisible();
    await expect(page.getByTestId("timeline-entry").first()).toBeVisible();
    // The plan sits under the steering controls, in the detail's upper part: show it.
    await page.getByTestId("run-plan").evaluate((el) => el.scrollIntoView({ block: "start" }));
    await shot("runs");

    await view(page, "3", "search-view");
    await page.keyboard.type("release");
    await page.waitForTimeout(500);
    await shot("search");

    await view(page, "4", "rules-view");
    await shot("rules");
    await view(page, "5", "metrics-view");
    await page.waitForTimeout(500);
    await shot("metrics");
  });
}

for (const theme of ["light", "dark"] as const) {
  test(`a team run, ${theme}`, async ({ page, gatehouse }) => {
    await page.emulateMedia({ colorScheme: theme });
    const { panel } = await teamAtReview(page, gatehouse);
    await expect(panel).toBeVisible();
    await expect(page.locator("html")).toHaveAttribute("data-theme", theme);
    // The team, who holds the turn and the handoff graph, at the top of the detail.
    await panel.evaluate((el) => el.scrollIntoView({ block: "start" }));
    await page.mouse.move(0, 0);
    await page.screenshot({ path: `${OUT}team-${theme}.png` });
  });
}

async function view(page: Page, key: string, testid: string): Promise<void> {
  // Leave any field (a search field with text takes two: clear, then leave).
  await page.keyboard.press("Escape");
  await page.keyboard.press("Escape");
  await page.keyboard.press(key);
  await expect(page.getByTestId(testid)).toBeVisible();
}
