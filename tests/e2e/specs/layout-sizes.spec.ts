// Every view is usable at 800, 1440 and 2560 px wide: nothing in the
// header is cut off (Sign out stays on screen), the page never scrolls
// sideways, the pane beside the panel (the gate preview, the run's detail)
// keeps a usable width, and on a wide screen the gate window uses the room.

import type { Page } from "@playwright/test";
import { buildScene } from "../support/scene";
import { expect, signIn, test } from "../support/fixtures";

/** Fails when the page scrolls sideways or an element of the header ends outside the window. */
async function fits(page: Page, width: number): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, "the page scrolls sideways").toBeLessThanOrEqual(0);
  for (const id of ["sign-out", "show-shortcuts", "theme-toggle", "tab-metrics", "blocked-agents"]) {
    const box = await page.getByTestId(id).boundingBox();
    expect(box, `${id} is shown`).not.toBeNull();
    expect(box!.x, `${id} starts on screen`).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width, `${id} ends on screen`).toBeLessThanOrEqual(width);
  }
}

async function widthOf(page: Page, testid: string): Promise<number> {
  const box = await page.getByTestId(testid).boundingBox();
  return box?.width ?? 0;
}

for (const width of [800, 1440, 2560]) {
  test(`every view fits and keeps usable panes at ${width} px wide`, async ({ page, gatehouse }) => {
    await page.setViewportSize({ width, height: 900 });
    const scene = await buildScene(gatehouse, 8);
    await signIn(page, gatehouse, scene.reviewer);

    // The desk: the panel and, beside it, the selected gate's preview.
    await expect(page.getByTestId("preview-text")).toBeVisible();
    await fits(page, width);
    expect(await widthOf(page, "gate-preview-pane")).toBeGreaterThanOrEqual(400);
    expect(await widthOf(page, "blocker-panel")).toBeGreaterThanOrEqual(280);

    // The gate window: on screen whole, and wider on a wide screen.
    await page.keyboard.press("Enter");
    const modal = page.getByTestId("resolution-modal");
    await expect(modal).toBeVisible();
    const box = (await modal.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(width);
    if (width >= 2560) expect(box.width).toBeGreaterThanOrEqual(1600);
    await page.keyboard.press("Escape");
    await expect(modal).toHaveCount(0);

    // Runs: the run's detail has room for its words, not one per line.
    await page.keyboard.press("2");
    await page.getByTestId("run-list").locator(`[data-run-id="${scene.runId}"]`).click();
    await expect(page.getByTestId("run-title")).toHaveText(scene.runTitle);
    await fits(page, width);
    expect(await widthOf(page, "run-detail")).toBeGreaterThanOrEqual(width <= 800 ? 420 : 600);
    const title = (await page.getByTestId("run-title").boundingBox())!;
    expect(title.height, "the run's title is on one line").toBeLessThan(40);

    for (const [key, testid] of [
      ["3", "search-view"],
      ["4", "rules-view"],
      ["5", "metrics-view"],
    ] as const) {
      await page.keyboard.press("Escape");
      await page.keyboard.press(key);
      await expect(page.getByTestId(testid)).toBeVisible();
      await fits(page, width);
      expect(await widthOf(page, testid), `${testid} is wide enough`).toBeGreaterThanOrEqual(width <= 800 ? 600 : 700);
    }
  });
}
