// The armed decision is readable: armed approve and armed reject buttons
// (and the primary button under the pointer) meet WCAG AA, 4.5:1, in the
// light and the dark scheme.

import { contrastOf } from "../support/contrast";
import { expect, signIn, test } from "../support/fixtures";

for (const scheme of ["light", "dark"] as const) {
  test(`armed approve and armed reject read at 4.5:1 or more (${scheme})`, async ({ page, gatehouse }) => {
    await page.emulateMedia({ colorScheme: scheme });
    const agent = gatehouse.agent(await gatehouse.token("agent", "deployer"));
    const runId = await agent.startRun("Clean up");
    await agent.openGate(runId, { kind: "approval", action: "DROP TABLE orders_2019", mode: "sync", text: "Drop it?" });

    await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
    await page.keyboard.press("Enter");
    const modal = page.getByTestId("resolution-modal");
    const approve = modal.getByTestId("decide-approve");
    const reject = modal.getByTestId("decide-reject");
    await expect(approve).toBeEnabled();
    await modal.focus();

    await page.keyboard.press("Alt+r");
    await expect(reject).toContainText("Confirm: reject");
    expect(await contrastOf(reject)).toBeGreaterThanOrEqual(4.5);
    await reject.hover();
    expect(await contrastOf(reject)).toBeGreaterThanOrEqual(4.5);

    await page.keyboard.press("Alt+a");
    await expect(approve).toContainText("Confirm: approve");
    await page.mouse.move(0, 0);
    expect(await contrastOf(approve)).toBeGreaterThanOrEqual(4.5);
    await approve.hover();
    expect(await contrastOf(approve)).toBeGreaterThanOrEqual(4.5);
    // Not armed, reject is red on the surface: readable too.
    await page.mouse.move(0, 0);
    await expect(reject).toHaveText(/^Reject/);
    expect(await contrastOf(reject)).toBeGreaterThanOrEqual(4.5);
  });
}
