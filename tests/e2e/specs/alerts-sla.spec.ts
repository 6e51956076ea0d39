// Alerts and SLAs in the Metrics view: a server started with alert
// thresholds and an urgent target raises an alert when the pending queue
// grows past its threshold (shown as a notice, without a reload), and the
// SLA section shows the share of each priority's gates a person decided
// within its target. An alert raised while the page is in the background
// notifies; clicking the notification, or following the desktop app's
// `#view=metrics` link, brings the reviewer to the Metrics view.

import { expect, signIn, test } from "../support/fixtures";
import { Gatehouse } from "../support/gatehouse.mjs";
import { clickNote, hidden, notes, recordNotifications } from "../support/notifications";

test("the metrics view shows SLA compliance per priority and an alert raised by the queue's threshold", async ({ page, context }) => {
  const gatehouse = await Gatehouse.start(["--alert-pending", "1", "--sla-urgent-minutes", "60", "--alert-auto-pass-percent", "90"]);
  try {
    const reviewer = await gatehouse.token("reviewer", "alice");
    const deployer = gatehouse.agent(await gatehouse.token("agent", "deployer"));
    const run = await deployer.startRun("Ship billing");
    const urgent = await deployer.openGate(run, { kind: "question", mode: "async", priority: "urgent", text: "Roll back now?" });
    await gatehouse.call(reviewer, "POST", `/gates/${urgent.id}/resolve`, { action: "respond", response: "yes" });
    await deployer.openGate(run, { kind: "question", mode: "async", text: "Which region first?" });

    await context.grantPermissions(["notifications"]);
    await recordNotifications(page);
    await signIn(page, gatehouse, reviewer);
    await page.keyboard.press("5");
    const view = page.getByTestId("metrics-view");
    const sla = view.getByTestId("sla-section");
    // One urgent gate, decided at once against a one-hour target; one normal gate pending, within its four hours.
    await expect(sla.getByTestId("sla-share-urgent")).toHaveText("100 %");
    await expect(sla.getByTestId("sla-row-urgent")).toContainText("1 h");
    await expect(sla.getByTestId("sla-row-urgent")).toContainText("1 of 1 within target");
    await expect(sla.getByTestId("sla-row-normal")).toContainText("no gates yet");
    await expect(sla.getByTestId("alert-thresholds")).toContainText("More than 1 gates pending");
    await expect(sla.getByTestId("alert-thresholds")).toContainText("Auto-pass rate over 90 % in 60 min");
    await expect(sla.getByTestId("alert-notice")).toHaveCount(0);

    // A second pending gate crosses the threshold while the reviewer is on the desk with the page hidden:
    // the server's sweep raises the alert, and the page notifies.
    await page.keyboard.press("1");
    await expect(view).toBeHidden();
    await hidden(page, true);
    await deployer.openGate(run, { kind: "question", mode: "async", text: "Tell the customers?" });
    await expect.poll(() => notes(page), { timeout: 20_000 }).toEqual([{ title: "Gatehouse alert", body: "2 gates pending (alert over 1)" }]);

    // Clicking the notification shows the Metrics view with the alert, live.
    await hidden(page, false);
    await clickNote(page, 0);
    await expect(view).toBeVisible();
    const notice = sla.getByTestId("alert-notice");
    await expect(notice).toHaveCount(1);
    await expect(notice).toHaveAttribute("data-kind", "pending_queue");
    await expect(notice).toContainText("2 gates pending (alert over 1)");

    // The desktop app's alert notifications link to `#view=metrics`: the desk follows it and drops the link.
    await page.keyboard.press("1");
    await expect(view).toBeHidden();
    await page.evaluate(() => (window.location.hash = "view=metrics"));
    await expect(view).toBeVisible();
    await expect.poll(() => page.evaluate(() => window.location.hash)).toBe("");
  } finally {
    await gatehouse.stop();
  }
});
