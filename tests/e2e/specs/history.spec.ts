// A decided gate shows the decision, never an editor: the payload the agent
// received, its difference from the proposal in red and green, who decided,
// when, why, and how long the agent waited.

import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { expect, signIn, test } from "../support/fixtures";

/** The serious or critical axe rules broken on the page as it is now. */
async function axeProblems(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id);
}

test("a past gate approved with edits shows the payload the agent received and its diff, read-only", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const runId = await agent.startRun("Archive cleanup");
  const gate = await agent.openGate(runId, {
    kind: "approval",
    action: "drop_table",
    mode: "sync",
    text: "Drop the archive table?",
    payload: { table: "orders_2019", cascade: true },
    example_input: { table: "orders_2000", cascade: false },
  });
  const decided = agent.wait(gate.id);
  await gatehouse.call(await gatehouse.token("reviewer", "bob"), "POST", `/gates/${gate.id}/resolve`, {
    action: "edit",
    payload: { table: "orders_2018", cascade: false },
    text: "2019 is still audited",
  });
  expect((await decided).decision?.payload).toEqual({ table: "orders_2018", cascade: false });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Control+k");
  const view = page.getByTestId("search-view");
  await view.getByTestId("search-input").fill("archive");
  await expect(view.getByTestId("search-hit")).toHaveCount(1);
  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  await expect(modal).toHaveAttribute("data-gate-id", gate.id);

  const record = modal.getByTestId("decision-record");
  await expect(record.getByTestId("decision-outcome")).toContainText("Approved with edits by bob");
  await expect(record.getByTestId("decision-text")).toHaveText("2019 is still audited");
  await expect(record.getByTestId("decision-waited")).toContainText(/deployer waited/);
  // What the agent received, and how it differs from what it proposed.
  const received = record.getByTestId("decision-final-payload");
  await expect(received).toContainText('"orders_2018"');
  await expect(received).not.toContainText("orders_2019");
  // Side by side first: the proposal on the left, red where it lost; what was received on the right, green where it gained.
  const diff = record.getByTestId("decision-payload-diff");
  const merge = diff.getByTestId("decision-payload-diff-merge");
  await expect(diff).toHaveAttribute("data-layout", "split");
  await expect(merge.locator(".cm-merge-a .cm-changedLine")).toContainText(["orders_2019", "true"]);
  await expect(merge.locator(".cm-merge-b .cm-changedLine")).toContainText(["orders_2018", "false"]);
  await expect(merge.locator(".cm-merge-a .cm-changedText").last()).toHaveText("true");
  await expect(merge.locator(".cm-merge-b .cm-changedText").last()).toHaveText("false");
  const colours = await merge.evaluate((el) => ({
    removed: getComputedStyle(el.querySelector(".cm-merge-a .cm-changedText")!).backgroundColor,
    added: getComputedStyle(el.querySelector(".cm-merge-b .cm-changedText")!).backgroundColor,
  }));
  expect(colours.removed).not.toBe(colours.added);
  expect(colours.removed).not.toBe("rgba(0, 0, 0, 0)");
  // Inline: one text, the removed lines shown above what replaced them; the choice is remembered.
  await diff.getByTestId("diff-layout-inline").click();
  await expect(diff).toHaveAttribute("data-layout", "inline");
  await expect(merge.locator(".cm-deletedChunk")).toContainText("orders_2019");
  await expect(merge.locator(".cm-changedText").first()).toBeVisible();
  await expect(merge.locator(".cm-content")).toContainText("orders_2018");
  expect(await page.evaluate(() => localStorage.getItem("gatehouse.diff-layout"))).toBe("inline");
  expect(await axeProblems(page), "axe on the inline diff").toEqual([]);
  await diff.getByTestId("diff-layout-split").click();
  await expect(merge.locator(".cm-merge-a")).toBeVisible();
  expect(await axeProblems(page), "axe on the side-by-side diff").toEqual([]);
  await diff.getByTestId("diff-layout-inline").click();
  await expect(merge.locator('[contenteditable="true"]')).toHaveCount(0);
  await expect(merge.locator(".cm-chunkButtons, button")).toHaveCount(0);
  // Nothing to edit or decide on a decided gate.
  await expect(modal.getByTestId("payload-input")).toHaveCount(0);
  await expect(modal.getByRole("button", { name: /Reset/ })).toHaveCount(0);
  await expect(modal.getByTestId("answer-input")).toHaveCount(0);
  await expect(modal.getByTestId("decision-bar")).toHaveCount(0);
  await expect(modal.locator("textarea, input:not([type=hidden]), [contenteditable=true]")).toHaveCount(0);
});

test("a past gate approved as proposed says the agent received the proposal unchanged", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const runId = await agent.startRun("Deploys");
  const gate = await agent.openGate(runId, { kind: "approval", action: "deploy", mode: "sync", text: "Deploy the web tier?", payload: { tier: "web" } });
  await gatehouse.call(await gatehouse.token("reviewer", "bob"), "POST", `/gates/${gate.id}/resolve`, { action: "approve" });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await page.keyboard.press("Control+k");
  await page.getByTestId("search-input").fill("web tier");
  await expect(page.getByTestId("search-hit")).toHaveCount(1);
  await page.keyboard.press("Enter");
  const record = page.getByTestId("resolution-modal").getByTestId("decision-record");
  await expect(record.getByTestId("decision-outcome")).toContainText("Approved by bob");
  await expect(record.getByTestId("decision-final-payload")).toContainText('"web"');
  await expect(record.getByTestId("decision-payload-unchanged")).toHaveText("The agent received the payload as proposed.");
  await expect(page.getByTestId("resolution-modal").getByTestId("payload-input")).toHaveCount(0);
});

test("an expired blocker says when it opened and expired, and restarts its task by retrying the run", async ({ page, gatehouse }) => {
  const agent = gatehouse.agent(await gatehouse.token("agent", "writer"));
  const runId = await agent.startRun("Quarterly letter");
  const lapsed = await agent.openGate(runId, { kind: "question", mode: "sync", text: "Mention the outage in the letter?", expires_in_secs: 1 });
  await expect.poll(async () => (await agent.wait(lapsed.id, 5)).status, { timeout: 15_000 }).toBe("expired");
  const alice = await gatehouse.token("reviewer", "alice");
  expect((await gatehouse.call<{ run: { status: string } }>(alice, "GET", `/run/${runId}/state`)).run.status).toBe("failed");

  await signIn(page, gatehouse, alice);
  await page.keyboard.press("Control+k");
  const view = page.getByTestId("search-view");
  await view.getByTestId("search-input").fill("outage");
  await expect(view.getByTestId("search-hit")).toHaveCount(1);
  await page.keyboard.press("Enter");
  const blocker = page.getByTestId("resolution-modal").getByTestId("expired-blocker");
  await expect(blocker).toContainText(/^Opened .+; expired .+ with nobody answering\./);
  await expect(blocker).toContainText("The task it held up needs a manual restart: retry its run from its last good step.");
  await blocker.getByTestId("expired-blocker-retry").click();
  await expect(blocker.getByTestId("expired-blocker-retried")).toBeVisible();
  const state = await gatehouse.call<{ run: { status: string; retries: number } }>(alice, "GET", `/run/${runId}/state`);
  expect([state.run.status, state.run.retries]).toEqual(["active", 1]);
});
