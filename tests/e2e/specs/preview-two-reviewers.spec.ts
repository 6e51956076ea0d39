// Two reviewers on one desk: when Bob decides the gate Alice has selected,
// Alice's preview stays on it and says who decided, what, why and when (the
// decision's record), instead of moving on under her eyes; j and k then
// move on to the neighbour she meant.

import AxeBuilder from "@axe-core/playwright";
import type { Browser, Page } from "@playwright/test";
import type { Gatehouse } from "../support/gatehouse.mjs";
import { expect, signIn, test } from "../support/fixtures";

async function reviewerPage(browser: Browser, server: Gatehouse, name: string): Promise<Page> {
  const context = await browser.newContext({ timezoneId: "UTC", locale: "en-GB" });
  const page = await context.newPage();
  await signIn(page, server, await server.token("reviewer", name));
  return page;
}

test("another reviewer's rejection keeps the preview on the gate, saying who, what, why and when; j and k move on", async ({
  browser,
  gatehouse,
}) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const runId = await agent.startRun("Clean up the archive");
  await agent.openGate(runId, { kind: "approval", action: "vacuum", mode: "sync", priority: "urgent", text: "Vacuum the archive?" });
  const target = await agent.openGate(runId, { kind: "approval", action: "DROP TABLE orders_2019", mode: "sync", text: "Drop the 2019 orders?" });
  await agent.openGate(runId, { kind: "question", mode: "async", text: "Rotate the logs?" });

  const alice = await reviewerPage(browser, gatehouse, "alice");
  const bob = await reviewerPage(browser, gatehouse, "bob");
  const pane = alice.getByTestId("gate-preview-pane");
  await expect(alice.getByTestId("blocker-row")).toHaveCount(3);
  await alice.keyboard.press("j");
  await expect(pane.getByTestId("preview-text")).toHaveText("Drop the 2019 orders?");
  await alice.keyboard.press("j");
  await expect(pane.getByTestId("preview-text")).toHaveText("Rotate the logs?");
  await alice.keyboard.press("k");
  await expect(pane.getByTestId("preview-text")).toHaveText("Drop the 2019 orders?");

  // Bob opens the same gate in his own window and rejects it with a note.
  await expect(bob.getByTestId("gate-preview-pane").getByTestId("preview-text")).toHaveText("Vacuum the archive?");
  await bob.keyboard.press("j");
  await expect(bob.getByTestId("gate-preview-pane").getByTestId("preview-text")).toHaveText("Drop the 2019 orders?");
  await bob.keyboard.press("Enter");
  const modal = bob.getByTestId("resolution-modal");
  await expect(modal).toHaveAttribute("data-gate-id", target.id);
  await modal.getByTestId("answer-input").fill("Finance still reads it");
  await modal.getByTestId("answer-input").press("Alt+r");
  await bob.keyboard.press("Control+Enter");
  await expect(modal).toHaveCount(0);

  // Alice's preview stays on the decided gate and says what became of it.
  const decided = pane.getByTestId("preview-decided");
  await expect(decided.getByTestId("preview-decided-by")).toHaveText("Rejected by bob.");
  await expect(decided.getByTestId("decision-outcome")).toContainText("Rejected by bob");
  await expect(decided.getByTestId("decision-text")).toHaveText("Finance still reads it");
  await expect(decided.getByTestId("decision-when")).toContainText("by bob");
  await expect(pane.getByTestId("preview-text")).toHaveText("Drop the 2019 orders?");
  await expect(pane.getByTestId("preview-open")).toContainText("Open to read");
  await expect(alice.getByTestId("blocker-row")).toHaveCount(2);
  const { violations } = await new AxeBuilder({ page: alice }).analyze();
  expect(violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id), "axe on the held preview").toEqual([]);

  // A decision key does not reach the gate behind it.
  await alice.keyboard.press("a");
  await expect(alice.getByTestId("resolution-modal")).toHaveCount(0);
  await expect(alice.getByTestId("notice")).toContainText("already decided");

  // Enter opens the decided gate to read, not the next one.
  await alice.keyboard.press("Enter");
  await expect(alice.getByTestId("resolution-modal")).toHaveAttribute("data-gate-id", target.id);
  await alice.keyboard.press("Escape");
  await expect(alice.getByTestId("resolution-modal")).toHaveCount(0);
  await expect(decided).toBeVisible();

  // k goes to the gate before it; the hold is over.
  await alice.keyboard.press("k");
  await expect(pane.getByTestId("preview-text")).toHaveText("Vacuum the archive?");
  await expect(pane.getByTestId("preview-decided")).toHaveCount(0);
  await alice.keyboard.press("j");
  await expect(pane.getByTestId("preview-text")).toHaveText("Rotate the logs?");
});

test("j after a held gate goes to the one that took its place", async ({ browser, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const runId = await agent.startRun("Release 8");
  const first = await agent.openGate(runId, { kind: "approval", action: "deploy", mode: "sync", text: "Deploy release 8?" });
  await agent.openGate(runId, { kind: "question", mode: "async", text: "Rotate the logs?" });
  const alice = await reviewerPage(browser, gatehouse, "alice");
  const pane = alice.getByTestId("gate-preview-pane");
  await expect(pane.getByTestId("preview-text")).toHaveText("Deploy release 8?");

  await gatehouse.call(await gatehouse.token("reviewer", "bob"), "POST", `/gates/${first.id}/resolve`, { action: "approve", text: "staging is green" });
  await expect(pane.getByTestId("preview-decided-by")).toHaveText("Approved by bob.");
  await expect(pane.getByTestId("decision-text")).toHaveText("staging is green");
  await alice.keyboard.press("j");
  await expect(pane.getByTestId("preview-text")).toHaveText("Rotate the logs?");
  await expect(pane.getByTestId("preview-decided")).toHaveCount(0);
});
