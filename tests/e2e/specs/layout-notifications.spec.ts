// Browser notifications like the desktop app's: permission is asked only
// when the reviewer presses the header's button; then, while the page is
// in the background, a new sync gate raises one notification naming its
// agent over its preview (async and advisory gates do not), and clicking
// it brings the page forward with the gate open.

import { expect, signIn, test } from "../support/fixtures";
import { hidden, notes, recordNotifications } from "../support/notifications";

test("a new sync gate raises a notification while the page is hidden; clicking it opens the gate", async ({ page, context, gatehouse }) => {
  await context.grantPermissions(["notifications"]);
  await recordNotifications(page);
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const agent = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const runId = await agent.startRun("Deploy");

  // In sight: no notification.
  await agent.openGate(runId, { kind: "approval", action: "deploy", mode: "sync", text: "Deploy v1?" });
  await expect(page.getByTestId("blocker-count")).toHaveText("1");
  expect(await notes(page)).toEqual([]);

  // In the background: a sync gate notifies, async and advisory ones do not.
  await hidden(page, true);
  await agent.openGate(runId, { kind: "question", mode: "async", text: "Which region?" });
  await agent.openGate(runId, { kind: "question", mode: "advisory", text: "Any thoughts?" });
  const gate = await agent.openGate(runId, { kind: "approval", action: "migrate", mode: "sync", text: "**Migrate** the `orders` table?" });
  await expect(page.getByTestId("blocker-count")).toHaveText("4");
  await expect.poll(() => notes(page)).toEqual([{ title: "deployer is waiting for you", body: "Migrate the orders table?" }]);

  // Clicking it opens that gate.
  await hidden(page, false);
  await page.evaluate(() => (window as unknown as { __notes: { click: () => void }[] }).__notes[0]!.click());
  const modal = page.getByTestId("resolution-modal");
  await expect(modal).toBeVisible();
  await expect(modal).toContainText("orders");
  await expect(page.locator(`[data-testid="blocker-row"][data-gate-id="${gate.id}"]`)).toHaveAttribute("aria-selected", "true");
});

test("permission is asked when the reviewer presses the header's button, never on load", async ({ page, gatehouse }) => {
  await recordNotifications(page);
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const asked = () => page.evaluate(() => (window as unknown as { __asked: number }).__asked);
  const button = page.getByTestId("notify-toggle");
  await expect(button).toHaveText("Notify me");
  expect(await asked()).toBe(0);
  await button.click();
  await expect.poll(asked).toBe(1);
});
