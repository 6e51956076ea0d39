// The Runs view keeps the timeline in sight with a plan beside or above
// it: at 800×900 and 1440×900 a run with a plan and a long log shows its
// entries in a list of real height that scrolls; replay shows the entries
// it has revealed; handoffs, decisions and control actions are marked
// apart by a symbol and a word.

import { buildScene } from "../support/scene";
import { expect, signIn, test } from "../support/fixtures";

for (const width of [800, 1440]) {
  test(`the timeline of a run with a plan is visible and scrolls at ${width}×900`, async ({ page, gatehouse }) => {
    await page.setViewportSize({ width, height: 900 });
    const scene = await buildScene(gatehouse, 30);
    await signIn(page, gatehouse, scene.reviewer);
    await page.keyboard.press("2");
    await page.getByTestId("run-list").locator(`[data-run-id="${scene.runId}"]`).click();
    await expect(page.getByTestId("run-plan")).toBeAttached();

    const list = page.getByTestId("timeline-entries");
    await expect(list.getByTestId("timeline-entry").first()).toBeVisible();
    const box = (await list.boundingBox())!;
    expect(box.height, "the entries have room").toBeGreaterThanOrEqual(200);
    expect(box.y + 200, "and it is on screen").toBeLessThanOrEqual(900);
    // It scrolls inside: more entries than fit, reached by scrolling the list.
    const sizes = await list.evaluate((el) => ({ scroll: el.scrollHeight, client: el.clientHeight }));
    expect(sizes.scroll).toBeGreaterThan(sizes.client);
    await list.evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await expect(list.getByTestId("timeline-entry").last()).toBeInViewport();
    // The plan is above or beside it, within the window's height.
    const plan = (await page.getByTestId("run-plan").boundingBox())!;
    expect(plan.y < box.y || plan.x + plan.width <= box.x).toBe(true);

    // Replay: a step shows its entries, not a heading alone.
    await page.getByTestId("run-replay").click();
    for (let i = 0; i < 4; i++) await page.getByTestId("replay-next").click();
    await expect(page.getByTestId("replay-status")).toHaveText(/^Replay: step 5 of \d+$/);
    const shown = list.getByTestId("timeline-entry");
    await expect(shown).toHaveCount(5);
    for (let i = 0; i < 5; i++) await expect(shown.nth(i)).toBeInViewport();
  });
}

test("handoffs, decisions and control actions are told apart at a glance", async ({ page, gatehouse }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const scene = await buildScene(gatehouse, 6);
  await signIn(page, gatehouse, scene.reviewer);
  await page.keyboard.press("2");
  await page.getByTestId("run-list").locator(`[data-run-id="${scene.runId}"]`).click();
  const entries = page.getByTestId("timeline-entry");

  const handoff = entries.filter({ hasText: "Handoff to editor" });
  await expect(handoff).toHaveCount(1);
  await expect(handoff).toHaveAttribute("data-group", "handoff");
  await expect(handoff.getByTestId("timeline-kind")).toHaveText("⇄ handoff");
  const decision = entries.filter({ hasText: "Decided: approve" });
  await expect(decision.getByTestId("timeline-kind")).toHaveText("✓ decision");
  const control = entries.filter({ hasText: "Instruction: Keep each entry to one line." });
  await expect(control.getByTestId("timeline-kind")).toHaveText("⚙ control");
  // Case-sensitive: "Turn 1:" as a string also matches "● turn" before a clock reading 1:xx.
  const turn = entries.filter({ hasText: /Turn 1: Worked/ });
  await expect(turn.getByTestId("timeline-kind")).toHaveText("● turn");

  // Each kind has a colour of its own too.
  const colour = (l: typeof turn) => l.getByTestId("timeline-kind").evaluate((el) => getComputedStyle(el).color);
  const colours = new Set([await colour(handoff), await colour(decision), await colour(control), await colour(turn)]);
  expect(colours.size).toBe(4);
});
