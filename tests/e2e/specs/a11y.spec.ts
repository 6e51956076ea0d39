// axe-core on every view and every state of the resolution modal, as a
// new reviewer met them: the sign-in page, the queue, the Runs, Search,
// Metrics and Rules views; a gate with approval armed, with rejection
// armed, decided by another reviewer while open, decided already (read
// only), a quorum gate after this reviewer's vote, and a form gate. No
// serious or critical violation is allowed anywhere.

import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { expect, signIn, test } from "../support/fixtures";

/** The serious and critical violations on the page as it is now, each as "rule: where". */
async function violations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .flatMap((v) => v.nodes.slice(0, 3).map((n) => `${v.id} (${v.impact}): ${n.target.join(" ")} — ${v.help}`));
}

async function expectAccessible(page: Page, what: string): Promise<void> {
  expect(await violations(page), `axe on ${what}`).toEqual([]);
}

test("the sign-in page and every view have no serious or critical axe violation", async ({ browser, page, gatehouse }) => {
  test.setTimeout(120_000);
  const context = await browser.newContext();
  const signInPage = await context.newPage();
  await signInPage.goto(gatehouse.url);
  await expect(signInPage.getByTestId("sign-in")).toBeVisible();
  await expectAccessible(signInPage, "the sign-in page");
  await context.close();

  const agent = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const runId = await agent.startRun("Release 7");
  await agent.openGate(runId, { kind: "approval", action: "deploy", mode: "sync", priority: "urgent", text: "Deploy release 7?" });
  await agent.openGate(runId, { kind: "question", mode: "async", text: "Which region?" });
  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await expect(page.getByTestId("blocker-row")).toHaveCount(2);
  await expectAccessible(page, "the queue");

  await page.getByTestId("tab-runs").click();
  await expect(page.getByTestId("timeline-entry").first()).toBeVisible();
  await expectAccessible(page, "the Runs view");
  await page.getByTestId("tab-search").click();
  await expect(page.getByTestId("search-hit")).toHaveCount(2);
  await expectAccessible(page, "the Search view");
  await page.getByTestId("tab-metrics").click();
  await expect(page.getByTestId("metrics-view")).toBeVisible();
  await expectAccessible(page, "the Metrics view");
  await page.getByTestId("tab-rules").click();
  await expect(page.getByTestId("rules-view")).toBeVisible();
  await expectAccessible(page, "the Rules view");
  await page.keyboard.press("?");
  await expect(page.getByTestId("shortcuts-dialog")).toBeVisible();
  await expectAccessible(page, "the shortcuts list");
});

test("every state of the resolution modal has no serious or critical axe violation", async ({ page, gatehouse }) => {
  test.setTimeout(120_000);
  const agent = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const runId = await agent.startRun("Release 7");
  const approval = await agent.openGate(runId, {
    kind: "approval",
    action: "deploy",
    mode: "sync",
    text: "Deploy release 7?",
    payload: { service: "billing", replicas: 3 },
    example_input: { service: "search", replicas: 1 },
    expires_in_secs: 900,
  });
  const contested = await agent.openGate(runId, { kind: "approval", action: "restart", mode: "sync", text: "Restart the cache?" });
  const quorum = await agent.openGate(runId, { kind: "approval", action: "ship", mode: "sync", text: "Ship it?", quorum: { required: 2 } });
  const form = await agent.openGate(runId, {
    kind: "question",
    mode: "sync",
    text: "Where and how much?",
    response_schema: {
      type: "object",
      required: ["region"],
      properties: { region: { type: "string", enum: ["eu", "us"] }, percent: { type: "integer", minimum: 0, maximum: 100 }, notify: { type: "boolean" } },
    },
  });
  const past = await agent.openGate(runId, { kind: "approval", action: "notify", mode: "sync", text: "Tell the team?", payload: { channel: "general" } });
  const bob = await gatehouse.token("reviewer", "bob");
  await gatehouse.call(bob, "POST", `/gates/${past.id}/resolve`, { action: "edit", payload: { channel: "launch" }, text: "Launch channel" });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const modal = page.getByTestId("resolution-modal");
  async function open(id: string): Promise<void> {
    await page.evaluate((gateId) => (window.location.hash = `gate=${gateId}`), id);
    await expect(modal).toHaveAttribute("data-gate-id", id);
    await expect(modal.getByTestId("gate-text")).toBeVisible();
  }
  async function close(): Promise<void> {
    await modal.getByTestId("modal-close").click();
    await expect(modal).toHaveCount(0);
  }

  await open(approval.id);
  await page.keyboard.press("Alt+a");
  await expect(modal.getByTestId("armed-decision")).toBeVisible();
  await expectAccessible(page, "an approval armed");
  await page.keyboard.press("Alt+r");
  await expect(modal.getByTestId("armed-decision")).toContainText("Reject");
  await expectAccessible(page, "a rejection armed");
  await close();

  await open(contested.id);
  await page.keyboard.type("Wait for the deploy");
  await gatehouse.call(bob, "POST", `/gates/${contested.id}/resolve`, { action: "reject", text: "Not today" });
  await expect(modal.getByTestId("closed-notice")).toBeVisible();
  await expect(modal.getByTestId("decision-outcome")).toBeVisible();
  await expectAccessible(page, "a gate another reviewer decided");
  await close();

  await open(past.id);
  await expect(modal.getByTestId("decision-outcome")).toBeVisible();
  await expectAccessible(page, "a decided gate, read only");
  await close();

  await open(quorum.id);
  await page.keyboard.press("Alt+a");
  await page.keyboard.press("Control+Enter");
  await expect(page.getByTestId("notice")).toContainText("1 of 2");
  await open(quorum.id);
  await expect(modal.getByTestId("quorum-tally")).toHaveText("1 of 2 approvals");
  await expectAccessible(page, "a quorum gate after a vote");
  await close();

  await open(form.id);
  await expect(modal.getByTestId("response-form")).toBeVisible();
  await expectAccessible(page, "a form gate");
});
